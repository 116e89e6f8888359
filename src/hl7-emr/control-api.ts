// The bundled HL7 EMR's control API (/_emr/), for QA and the demo, beside its MLLP port: what it holds
// (patients, appointments, received messages, notifications pending), filing a document, and its faults.
// Bodies are read strictly: an unknown field answers 400 naming it.
import Router from '@koa/router';
import Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import { type ZodType, z } from 'zod';
import { ValidationError } from '../errors.ts';
import { errorMiddleware } from '../http/error-middleware.ts';
import { readJson } from '../http/json-body.ts';
import type { Logger } from '../logger.ts';
import { SYNTHETIC_PDF } from './documents.ts';
import type { ActiveFault } from './faults.ts';
import { faultSchema } from './faults.ts';
import type { DocumentRequest, EmrAppointment, EmrPatient, FaultSetting, LabResultRequest, ReceivedMessage } from './model.ts';

/** What the control API reads and drives: the running EMR's accessors. */
export interface ControlTarget {
  patients(): EmrPatient[];
  appointments(): EmrAppointment[];
  received(): ReceivedMessage[];
  pendingNotifications(): number;
  fileDocument(req: DocumentRequest): string;
  fileLabResult(req: LabResultRequest): string;
  setFault(f: FaultSetting): void;
  fault(): ActiveFault | null;
}

/** Room for a PDF of the service's 15 MB limit and then some, base64. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** The body, strictly: an unknown key (the likeliest cause of any other issue) is named first. */
async function readControlBody<T>(req: IncomingMessage, schema: ZodType<T>): Promise<T> {
  const result = schema.safeParse(await readJson(req, MAX_BODY_BYTES));
  if (result.success) return result.data;
  const unknown = result.error.issues.find((i) => i.code === 'unrecognized_keys');
  const [path, message] = unknown ? [[...unknown.path, unknown.keys[0]!], 'unknown field'] : [result.error.issues[0]!.path, result.error.issues[0]!.message];
  const field = path.map(String).join('.');
  throw new ValidationError(`${field || 'body'}: ${message}`, field || undefined);
}

const documentBody = z
  .strictObject({
    patientServiceId: z.string().min(1).optional(),
    mrn: z.string().min(1).optional(),
    documentType: z.enum(['lab_report', 'prescription']),
    label: z.string().min(1),
    filename: z.string().min(1).optional(),
    /** The PDF, base64; a one-page synthetic PDF when absent. */
    pdfBase64: z
      .string()
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64')
      .optional(),
    documentId: z.string().min(1).max(100).optional(),
    /** MDM (MDM^T02, the default) or ORU (ORU^R01, lab reports only). */
    format: z.enum(['MDM', 'ORU']).optional(),
  })
  .refine((b) => b.patientServiceId || b.mrn, { message: 'patientServiceId or mrn is required', path: ['patientServiceId'] });

function fileFromBody(emr: ControlTarget, b: z.infer<typeof documentBody>): string {
  const pdf = b.pdfBase64 ? Buffer.from(b.pdfBase64, 'base64') : SYNTHETIC_PDF;
  const patient = { ...(b.patientServiceId ? { patientServiceId: b.patientServiceId } : {}), ...(b.mrn ? { mrn: b.mrn } : {}) };
  const documentId = b.documentId ? { documentId: b.documentId } : {};
  if (b.format === 'ORU') {
    if (b.documentType !== 'lab_report') throw new ValidationError('format: ORU files lab reports only', 'format');
    return emr.fileLabResult({ ...patient, label: b.label, pdf, ...documentId });
  }
  return emr.fileDocument({ ...patient, documentType: b.documentType, label: b.label, pdf, ...documentId, ...(b.filename ? { filename: b.filename } : {}) });
}

export function createControlApp(emr: ControlTarget, logger: Logger): Koa {
  const router = new Router({ prefix: '/_emr' });
  router.get('/patients', (ctx) => {
    ctx.body = { patients: emr.patients() };
  });
  router.get('/appointments', (ctx) => {
    ctx.body = { appointments: emr.appointments() };
  });
  router.get('/received', (ctx) => {
    ctx.body = { received: emr.received() };
  });
  router.get('/notifications', (ctx) => {
    ctx.body = { pending: emr.pendingNotifications() };
  });
  router.post('/documents', async (ctx) => {
    const documentId = fileFromBody(emr, await readControlBody(ctx.req, documentBody));
    ctx.status = 201;
    ctx.body = { documentId };
  });
  router.get('/faults', (ctx) => {
    ctx.body = { fault: emr.fault() };
  });
  router.post('/faults', async (ctx) => {
    emr.setFault(await readControlBody(ctx.req, faultSchema));
    ctx.body = { fault: emr.fault() };
  });
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(errorMiddleware(logger));
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
