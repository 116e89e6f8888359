// Admin routes of the pusher (under /admin, behind ADMIN_TOKEN): push a document directly (a laboratory
// information system, the CLI), list documents a page at a time (by status, type and creation time), show
// one with its history (from the EMR or the push to its final status), send again one that failed here.
// Answers carry identifiers, status, reasons and times; never labels, names, phones or file bytes.
import Router from '@koa/router';
import { z } from 'zod';
import { labReportRequestSchema, prescriptionRequestSchema } from '../contract/documents.ts';
import { DOCUMENT_TYPES, type DocumentType } from '../contract/events.ts';
import { AppError, NotFoundError, ValidationError } from '../errors.ts';
import { readJson } from '../http/json-body.ts';
import { decodeCursor, encodeCursor, parseListQuery } from '../http/list-query.ts';
import type { Logger } from '../logger.ts';
import { isFinal, type OutboxState } from '../storage/documents.ts';
import { historyStepView, publicView } from './outbox.ts';
import type { Pusher } from './pusher.ts';

const STATES = ['queued', 'SENT', 'HELD', 'FAILED', 'SUPPRESSED', 'REJECTED'] as const satisfies readonly OutboxState[];

/** GET /admin/documents: its own parameters besides the shared ones (src/http/list-query.ts). */
export const documentListParams = { status: z.enum(STATES).optional(), type: z.enum(DOCUMENT_TYPES).optional() };

const documentPosition = z.strictObject({ createdAt: z.number().int(), externalId: z.string() });

/** The first field of a document request that the interface does not define, as a dotted path. */
function unknownRequestField(documentType: DocumentType, request: Record<string, unknown>): string | undefined {
  const schema = documentType === 'lab_report' ? labReportRequestSchema : prescriptionRequestSchema;
  const top = Object.keys(request).find((k) => !(k in schema.shape));
  if (top) return top;
  const file = request.file;
  if (file && typeof file === 'object' && !Array.isArray(file)) {
    const inner = Object.keys(file).find((k) => !FILE_FIELDS.includes(k));
    if (inner) return `file.${inner}`;
  }
  return undefined;
}
const FILE_FIELDS = ['base64', 'url', 'filename', 'mimeType'];

export interface PusherAdminDeps {
  pusher: Pick<Pusher, 'enqueue' | 'outbox'>;
  logger: Logger;
  /** ADMIN_MAX_BODY_BYTES: a pushed document carries its file in base64. */
  maxBodyBytes: number;
}

export function createPusherAdminRouter(deps: PusherAdminDeps): Router {
  const router = new Router();
  router.post('/documents', async (ctx) => {
    const body = await readJson(ctx.req, deps.maxBodyBytes);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the body must be a JSON object');
    const { documentType, ...request } = body as Record<string, unknown>;
    if (!(DOCUMENT_TYPES as readonly unknown[]).includes(documentType))
      throw new ValidationError(`documentType must be one of ${DOCUMENT_TYPES.join(', ')}`, 'documentType');
    // A misspelt field (patientPhon) must not be dropped silently: the document would go out without it.
    const unknown = unknownRequestField(documentType as DocumentType, request);
    if (unknown) throw new ValidationError(`${unknown}: not a field of a ${documentType} request`, unknown);
    const source = ctx.get('x-emr-bridge-source') === 'cli' ? 'cli' : 'api';
    const result = await deps.pusher.enqueue(documentType as DocumentType, request, source);
    if (!result.ok) {
      const status = result.code === 'file_too_large' ? 413 : result.code === 'unsupported_file_type' ? 415 : result.code === 'invalid_request' ? 400 : 422;
      throw new AppError({ code: result.code, status, message: result.reason, field: 'file' });
    }
    deps.logger.info({ externalId: result.row.external_id, documentType, created: result.created }, 'document accepted for sending');
    ctx.status = result.created ? 202 : 200;
    ctx.body = { document: publicView(result.row), created: result.created };
  });
  router.get('/documents', async (ctx) => {
    const q = parseListQuery(ctx.query, documentListParams);
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, documentPosition);
    const page = await deps.pusher.outbox.page({ limit: q.limit, after, status: q.status, type: q.type, since: q.since, until: q.until });
    ctx.body = { documents: page.rows.map(publicView), nextCursor: page.next && encodeCursor(page.next) };
  });
  router.post('/documents/:externalId/retry', async (ctx) => {
    const row = await deps.pusher.outbox.get(ctx.params.externalId!);
    if (!row) throw new NotFoundError('no such document');
    if (!(await deps.pusher.outbox.resend(row.external_id)))
      throw new AppError({
        code: 'not_retryable',
        status: 409,
        message: `only a document that failed before the service took it can be sent again; this one is ${row.state}${isFinal(row) ? ' at the service, which is final' : ''}`,
      });
    deps.logger.info({ externalId: row.external_id, documentType: row.document_type }, 'document queued again by an operator');
    ctx.body = { document: publicView((await deps.pusher.outbox.get(row.external_id))!) };
  });
  router.get('/documents/:externalId', async (ctx) => {
    const row = await deps.pusher.outbox.get(ctx.params.externalId!);
    if (!row) throw new NotFoundError('no such document');
    ctx.body = { document: publicView(row), history: (await deps.pusher.outbox.history(row.external_id)).map(historyStepView) };
  });
  return router;
}
