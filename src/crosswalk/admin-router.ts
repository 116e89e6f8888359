// The crosswalk's admin routes (docs/crosswalk.md), mounted under /admin: the records listed with their waiting
// events (a page at a time), one mapped or unmapped by an operator, the EMR's suggestions for one, and the CSV
// import and export. Every change goes through the crosswalk module (./crosswalk.ts), which checks it against the
// EMR, makes it under the entity's lock and records it in the audit trail as this request's (its actor, door and
// address); viewers read, operators change (src/access/admin-routes.ts).
import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { actorOf, addressOf, doorOf } from '../app/admin-auth.ts';
import { auditedByRoute } from '../app/admin-access.ts';
import { AppError, NotFoundError, ValidationError } from '../errors.ts';
import { readValidated } from '../http/json-body.ts';
import { decodeCursor, encodeCursor, listParams, DEFAULT_LIMIT, toValidationError } from '../http/list-query.ts';
import { CROSSWALK_ENTITY_TYPES, type CrosswalkItem, type CrosswalkStore } from '../storage/crosswalk.ts';
import type { LackedRecord } from '../storage/processing.ts';
import type { Crosswalk, Requester } from './crosswalk.ts';
import { CSV_MAX_BYTES, CsvFileRefused, exportCsv, importCsv } from './csv.ts';
import { CrosswalkRefusal } from './errors.ts';
import { EMR_ID_MAX, idProblem, isCrosswalkEntityType, SERVICE_ID_MAX } from './values.ts';

/** GET /admin/crosswalk's parameters. */
export const crosswalkListParams = {
  entityType: z.enum(CROSSWALK_ENTITY_TYPES).optional(),
  state: z.enum(['mapped', 'unmapped']).optional(),
  cursor: listParams.cursor,
  limit: listParams.limit,
};
/** PUT /admin/crosswalk/{entityType}/{serviceId}: the EMR record it stands for. */
export const mapBody = z.strictObject({ emrId: z.string().min(1).max(EMR_ID_MAX).describe("The EMR record's id (FHIR: the logical id, no type).") });

const position = z.strictObject({ entityType: z.enum(CROSSWALK_ENTITY_TYPES), serviceId: z.string() });
/** Largest JSON body the PUT reads. */
const SMALL_BODY_BYTES = 16 * 1024;

export const crosswalkItemView = (i: CrosswalkItem) => ({
  entityType: i.entityType,
  serviceId: i.serviceId,
  name: i.name,
  emrId: i.emrId,
  waitingEvents: i.waitingEvents,
  source: i.source,
  updatedAt: new Date(i.updatedAt).toISOString(),
});

export interface CrosswalkRouterDeps {
  crosswalk: Crosswalk;
  /** The export's rows, and the newest event waiting for a patient (its snapshot names the patient for suggestions). */
  store: Pick<CrosswalkStore, 'allMapped'>;
}

/** Who asked, as the audit trail records it: the signed-in credential, the request's door and address. */
const requesterOf = (ctx: Context): Requester => ({ actor: actorOf(ctx)?.name ?? 'admin', door: doorOf(ctx), from: addressOf(ctx) });

/** The record a path names; a bad entity type or service id is a 400 naming it. */
function recordOf(ctx: Context): LackedRecord {
  const { entityType, serviceId } = ctx.params as { entityType: string; serviceId: string };
  if (!isCrosswalkEntityType(entityType))
    throw new ValidationError(`entityType: ${JSON.stringify(entityType.slice(0, 40))} is not patient, doctor or location`, 'entityType');
  const problem = idProblem('serviceId', serviceId, SERVICE_ID_MAX);
  if (problem) throw new ValidationError(problem, 'serviceId');
  return { entityType, serviceId };
}

export function createCrosswalkAdminRouter(deps: CrosswalkRouterDeps): Router {
  const { crosswalk } = deps;
  const router = new Router();
  router.get('/crosswalk', async (ctx) => {
    ctx.body = await listPage(crosswalk, ctx.query);
  });
  router.get('/crosswalk/export', async (ctx) => {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', 'attachment; filename="crosswalk.csv"');
    ctx.body = await exportCsv(deps.store);
  });
  router.post('/crosswalk/import', async (ctx) => {
    if (!ctx.is('text/csv')) throw new AppError({ code: 'unsupported_media_type', status: 415, message: 'send the file as text/csv' });
    const text = await readCsv(ctx.req);
    try {
      ctx.body = await importCsv(crosswalk, text, requesterOf(ctx));
    } catch (err) {
      if (err instanceof CsvFileRefused) throw fileRefused(err);
      throw err;
    }
  });
  router.get('/crosswalk/:entityType/:serviceId/suggestions', async (ctx) => {
    ctx.body = { items: await crosswalk.suggestions(recordOf(ctx)) };
  });
  router.put('/crosswalk/:entityType/:serviceId', async (ctx) => {
    const record = recordOf(ctx);
    const { emrId } = await readValidated(ctx.req, mapBody, SMALL_BODY_BYTES);
    const problem = idProblem('emrId', emrId, EMR_ID_MAX);
    if (problem) throw new ValidationError(problem, 'emrId');
    try {
      const item = await crosswalk.map(record, emrId, 'operator', requesterOf(ctx));
      auditedByRoute(ctx);
      ctx.body = crosswalkItemView(item);
    } catch (err) {
      if (err instanceof CrosswalkRefusal) auditedByRoute(ctx);
      throw err;
    }
  });
  router.delete('/crosswalk/:entityType/:serviceId', async (ctx) => {
    const record = recordOf(ctx);
    const removed = await crosswalk.unmap(record, requesterOf(ctx));
    auditedByRoute(ctx);
    if (!removed) throw new NotFoundError(`no mapping of ${record.entityType} ${record.serviceId}`);
    ctx.status = 204;
  });
  return router;
}

/** GET /admin/crosswalk: a page in (entityType, serviceId) order; nextCursor while more follow. */
async function listPage(crosswalk: Crosswalk, query: unknown) {
  const r = z.strictObject(crosswalkListParams).safeParse(query);
  if (!r.success) throw toValidationError(r.error.issues[0]!);
  const { entityType, state, cursor } = r.data;
  const limit = r.data.limit ?? DEFAULT_LIMIT;
  const after = cursor === undefined ? undefined : decodeCursor(cursor, position);
  const rows = await crosswalk.list({ ...(entityType ? { entityType } : {}), ...(state ? { state } : {}), ...(after ? { after } : {}), limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(crosswalkItemView),
    nextCursor: rows.length > limit && last ? encodeCursor({ entityType: last.entityType, serviceId: last.serviceId }) : null,
  };
}

const tooLarge = (message: string) => new AppError({ code: 'file_too_large', status: 413, message: `${message}; nothing was imported` });

/** The CSV as text, read up to the import's limit: a larger file is refused whole, unread. */
async function readCsv(req: IncomingMessage): Promise<string> {
  try {
    return await getRawBody(req, { limit: CSV_MAX_BYTES, encoding: 'utf8' });
  } catch (err) {
    if ((err as { status?: number }).status !== 413) throw err;
    // Drained, so the client reads the answer instead of a reset connection.
    req.resume();
    throw tooLarge(`the file is larger than ${CSV_MAX_BYTES} bytes`);
  }
}

function fileRefused(err: CsvFileRefused): AppError {
  return err.kind === 'too_large' ? tooLarge(err.message) : new ValidationError(`${err.message}; nothing was imported`, undefined, 'invalid_csv');
}
