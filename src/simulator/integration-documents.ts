// The integration API's document routes (./integration-api.ts): lab reports and prescriptions pushed to a
// patient, idempotent by the caller's externalId (docs/decisions.md#replayed-externalid), and looked up by it.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ZodType } from 'zod';
import { sleep } from '../clock.ts';
import { ERROR_CODES, IDEMPOTENT_REPLAYED_HEADER } from '../contract/api.ts';
import { labReportRequestSchema, prescriptionRequestSchema, type DocumentRequest } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import { AppError, NotFoundError } from '../errors.ts';
import { readJson, validate } from '../http/json-body.ts';
import { newServiceId } from './documents.ts';
import type { IntegrationDeps } from './integration-api.ts';
import type { ApiKey, Person, SimDocument } from './store.ts';

/**
 * Largest document request the service reads: a file of MAX_FILE_BYTES is a third larger in base64, plus
 * the other fields. Larger answers 413. (The interface's rule, not a setting.)
 */
export const MAX_DOCUMENT_REQUEST_BYTES = 25 * 1024 * 1024;

const envelope = (d: SimDocument, action: 'received' | 'found') => ({
  resource: {
    type: 'document',
    documentType: d.documentType,
    serviceId: d.id,
    externalId: d.externalId,
    patientServiceId: d.patientServiceId,
    status: d.status,
    ...(d.statusReason ? { statusReason: d.statusReason } : {}),
    ...(d.releaseAfter ? { releaseAfter: d.releaseAfter } : {}),
    ...(d.sentAt ? { sentAt: d.sentAt } : {}),
    action,
  },
});

export function documentRoutes(router: Router, deps: IntegrationDeps): void {
  router.post('/lab-reports', (ctx) => push(deps, ctx, 'lab_report', labReportRequestSchema));
  router.post('/prescriptions', (ctx) => push(deps, ctx, 'prescription', prescriptionRequestSchema));
  router.get('/documents/:externalId', (ctx) => {
    const key = ctx.state.key as ApiKey;
    const ref = deps.store.get('document_ref', `${key.clinicId}:${ctx.params.externalId}`);
    const doc = ref && deps.store.get('document', ref.serviceId);
    if (!doc) throw new NotFoundError('no document with that externalId');
    ctx.body = envelope(doc, 'found');
  });
}

async function push(deps: IntegrationDeps, ctx: Context, documentType: DocumentType, schema: ZodType<DocumentRequest>): Promise<void> {
  const { store } = deps;
  const key = ctx.state.key as ApiKey;
  const body = validate(schema, await readJson(ctx.req, MAX_DOCUMENT_REQUEST_BYTES));
  const refId = `${key.clinicId}:${body.externalId}`;
  const prior = store.get('document_ref', refId);
  if (prior) {
    ctx.status = 201;
    ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
    ctx.body = await firstResponseOf(deps, prior.serviceId);
    return;
  }
  const serviceId = newServiceId('doc');
  // Claimed before anything is awaited, so a concurrent repeat of the externalId replays, never delivers.
  store.put('document_ref', { id: refId, serviceId }, key.clinicId);
  let response: ReturnType<typeof envelope>;
  try {
    response = envelope(await receive(deps, key, serviceId, documentType, body), 'received');
  } catch (err) {
    // A refused request is not a first response: the caller may fix it and send the externalId again.
    store.remove('document_ref', refId);
    store.remove('document', serviceId);
    throw err;
  }
  store.put('document', { ...store.get('document', serviceId)!, firstResponse: response });
  ctx.status = 201;
  ctx.body = response;
}

/** Stores a new document for its patient and decides what happens to it (the state table of ./documents.ts). */
async function receive(deps: IntegrationDeps, key: ApiKey, serviceId: string, documentType: DocumentType, body: DocumentRequest): Promise<SimDocument> {
  const patientServiceId = resolvePatient(deps, key, body);
  const file = await deps.files.resolve(body.file);
  const doc: SimDocument = {
    id: serviceId,
    clinicId: key.clinicId,
    externalId: body.externalId,
    documentType,
    patientServiceId,
    status: 'HELD',
    label: body.label,
    file,
    firstResponse: undefined,
  };
  deps.store.put('document', doc);
  return deps.documents.decide(doc, key.mode === 'sandbox');
}

function resolvePatient(deps: IntegrationDeps, key: ApiKey, body: DocumentRequest): string {
  const people = deps.store.list('patient', key.clinicId);
  if (body.patientExternalId) {
    const known = people.find((p) => p.externalId === body.patientExternalId);
    if (known) return known.id;
  }
  if (body.patientPhone && body.patientName) {
    const byPhone = people.find((p) => p.phone === body.patientPhone);
    if (byPhone) return byPhone.id;
    // A patientExternalId the service has not seen names the caller's record of this new patient: it is
    // kept as its externalId (so its patient.created carries it), as a claim's mapping would be.
    const externalId = body.patientExternalId ?? null;
    const created: Person = { id: newServiceId('pat'), clinicId: key.clinicId, externalId, name: body.patientName, phone: body.patientPhone };
    deps.store.put('patient', created);
    deps.onPatientCreated(created);
    return created.id;
  }
  throw new AppError({ code: ERROR_CODES.patientUnresolvable, status: 422, message: 'give a known patientExternalId, or patientPhone and patientName' });
}

async function firstResponseOf(deps: IntegrationDeps, serviceId: string): Promise<unknown> {
  // A repeat that arrives while the first request is still delivering waits for its answer.
  for (let i = 0; i < 1500; i++) {
    const first = deps.store.get('document', serviceId)?.firstResponse;
    if (first) return first;
    await sleep(10);
  }
  throw new AppError({ code: ERROR_CODES.internal, status: 500, message: 'internal error' });
}
