// The service's integration API (/integration/v1/), as docs/service-interface.md describes it and
// docs/decisions.md decides where it is silent:
// bearer keys, zod-validated bodies, documents with their state table, lookups, mappings, idempotent
// replay of an externalId (docs/decisions.md#replayed-externalid), the error bodies of
// docs/decisions.md#error-bodies; plus the faults and rate limit QA switches on.
import Router from '@koa/router';
import { z, type ZodType } from 'zod';
import { readJson, validate } from '../http/json-body.ts';
import { sleep, type Clock } from '../clock.ts';
import { IDEMPOTENT_REPLAYED_HEADER, MAPPING_ENTITY_TYPES, type MappingEntityType } from '../contract/api.ts';
import { labReportRequestSchema, prescriptionRequestSchema, type DocumentRequest } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import { AppError, NotFoundError, UnauthorizedError, ValidationError } from '../errors.ts';
import { newServiceId, type DocumentFlow } from './documents.ts';
import type { Faults } from './faults.ts';
import type { createFileFetcher } from './files.ts';
import type { ApiKey, Person, SimDocument, Store } from './store.ts';

/** PUT /integration/v1/mappings/{entityType}/{serviceId}: the caller's id for the service's record. */
export const mappingRequestSchema = z.object({ externalId: z.string('a non-empty string is required').min(1, 'a non-empty string is required') });

/**
 * Largest document request the service reads: a file of MAX_FILE_BYTES is a third larger in base64, plus
 * the other fields. Larger answers 413. (The interface's rule, not a setting.)
 */
export const MAX_DOCUMENT_REQUEST_BYTES = 25 * 1024 * 1024;

export interface IntegrationDeps {
  store: Store;
  clock: Clock;
  documents: DocumentFlow;
  files: ReturnType<typeof createFileFetcher>;
  faults: () => Faults;
  consumeIntegrationFault: () => void;
  onPatientCreated: (p: Person) => void;
}

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

export function createIntegrationRouter(deps: IntegrationDeps): Router {
  const { store, clock } = deps;
  const router = new Router({ prefix: '/integration/v1' });
  const window = new Map<string, number[]>();

  router.use(async (ctx, next) => {
    const faults = deps.faults();
    const f = faults.integration;
    if (f?.status) {
      deps.consumeIntegrationFault();
      if (f.status === 429) ctx.set('Retry-After', String(f.retryAfterSeconds));
      throw new AppError({
        code: f.status === 429 ? 'rate_limited' : 'internal',
        status: f.status,
        message: f.status === 429 ? 'too many requests' : 'internal error',
      });
    }
    const m = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    const key = m ? store.get('key', m[1]!) : undefined;
    if (!key) throw new UnauthorizedError('missing or unknown API key');
    if (faults.rateLimitPerMinute) {
      const now = clock.now();
      const recent = (window.get(key.id) ?? []).filter((t) => t > now - 60_000);
      if (recent.length >= faults.rateLimitPerMinute) {
        ctx.set('Retry-After', String(Math.max(1, Math.ceil((recent[0]! + 60_000 - now) / 1000))));
        throw new AppError({ code: 'rate_limited', status: 429, message: 'too many requests' });
      }
      window.set(key.id, [...recent, now]);
    }
    ctx.state.key = key;
    await next();
    // A slow service does the work and answers late: a caller that gives up must not lose the effect.
    if (f?.delayMs) await sleep(f.delayMs);
  });

  function resolvePatient(key: ApiKey, body: DocumentRequest): string {
    const people = store.list('patient', key.clinicId);
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
      store.put('patient', created);
      deps.onPatientCreated(created);
      return created.id;
    }
    throw new AppError({ code: 'patient_unresolvable', status: 422, message: 'give a known patientExternalId, or patientPhone and patientName' });
  }

  async function push(ctx: import('koa').Context, documentType: DocumentType, schema: ZodType<DocumentRequest>) {
    const key = ctx.state.key as ApiKey;
    const body = validate(schema, await readJson(ctx.req, MAX_DOCUMENT_REQUEST_BYTES));
    const refId = `${key.clinicId}:${body.externalId}`;
    const prior = store.get('document_ref', refId);
    if (prior) {
      ctx.status = 201;
      ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      ctx.body = await firstResponseOf(prior.serviceId);
      return;
    }
    const serviceId = newServiceId('doc');
    // Claimed before anything is awaited, so a concurrent repeat of the externalId replays, never delivers.
    store.put('document_ref', { id: refId, serviceId }, key.clinicId);
    let response: ReturnType<typeof envelope>;
    try {
      const patientServiceId = resolvePatient(key, body);
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
      store.put('document', doc);
      response = envelope(await deps.documents.decide(doc, key.mode === 'sandbox'), 'received');
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

  async function firstResponseOf(serviceId: string): Promise<unknown> {
    // A repeat that arrives while the first request is still delivering waits for its answer.
    for (let i = 0; i < 1500; i++) {
      const first = store.get('document', serviceId)?.firstResponse;
      if (first) return first;
      await sleep(10);
    }
    throw new AppError({ code: 'internal', status: 500, message: 'internal error' });
  }

  router.post('/lab-reports', (ctx) => push(ctx, 'lab_report', labReportRequestSchema));
  router.post('/prescriptions', (ctx) => push(ctx, 'prescription', prescriptionRequestSchema));

  router.get('/documents/:externalId', (ctx) => {
    const key = ctx.state.key as ApiKey;
    const ref = store.get('document_ref', `${key.clinicId}:${ctx.params.externalId}`);
    const doc = ref && store.get('document', ref.serviceId);
    if (!doc) throw new NotFoundError('no document with that externalId');
    ctx.body = envelope(doc, 'found');
  });

  router.put('/mappings/:entityType/:serviceId', async (ctx) => {
    const key = ctx.state.key as ApiKey;
    const entityType = ctx.params.entityType as MappingEntityType;
    if (!MAPPING_ENTITY_TYPES.includes(entityType)) throw new ValidationError(`entityType must be one of ${MAPPING_ENTITY_TYPES.join(', ')}`, 'entityType');
    const body = validate(mappingRequestSchema, await readJson(ctx.req, 64 * 1024));
    const record = store.get(entityType, ctx.params.serviceId!) as Person | undefined;
    if (!record || record.clinicId !== key.clinicId) throw new NotFoundError(`no ${entityType} ${ctx.params.serviceId}`);
    if (record.externalId !== null && record.externalId !== body.externalId)
      throw new AppError({ code: 'mapping_conflict', status: 409, message: `${entityType} ${record.id} is already mapped to another externalId` });
    store.put(entityType, { ...record, externalId: body.externalId } as never);
    ctx.body = { resource: { type: 'mapping', entityType, serviceId: record.id, externalId: body.externalId } };
  });
  return router;
}
