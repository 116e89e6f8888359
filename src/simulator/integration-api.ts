// The service's integration API (/integration/v1/), as docs/service-interface.md describes it and
// docs/decisions.md decides where it is silent:
// bearer keys, zod-validated bodies, documents with their state table, lookups, mappings, idempotent
// replay of an externalId (docs/decisions.md#replayed-externalid), the error bodies of
// docs/decisions.md#error-bodies; plus the faults and rate limit QA switches on.
// The document routes are in ./integration-documents.ts.
import { bearerToken } from '../http/bearer.ts';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import { sleep, type Clock } from '../clock.ts';
import { ERROR_CODES, MAPPING_ENTITY_TYPES, type MappingEntityType } from '../contract/api.ts';
import { AppError, NotFoundError, UnauthorizedError, ValidationError } from '../errors.ts';
import { readJson, validate } from '../http/json-body.ts';
import type { DocumentFlow } from './documents.ts';
import type { Faults } from './faults.ts';
import type { createFileFetcher } from './files.ts';
import { documentRoutes } from './integration-documents.ts';
import type { ApiKey, Person, Store } from './store.ts';

/** PUT /integration/v1/mappings/{entityType}/{serviceId}: the caller's id for the service's record. */
export const mappingRequestSchema = z.object({ externalId: z.string('a non-empty string is required').min(1, 'a non-empty string is required') });

export interface IntegrationDeps {
  store: Store;
  clock: Clock;
  documents: DocumentFlow;
  files: ReturnType<typeof createFileFetcher>;
  faults: () => Faults;
  consumeIntegrationFault: () => void;
  onPatientCreated: (p: Person) => void;
}

export function createIntegrationRouter(deps: IntegrationDeps): Router {
  const router = new Router({ prefix: '/integration/v1' });
  router.use(gate(deps));
  documentRoutes(router, deps);
  mappingRoutes(router, deps);
  return router;
}

/** Before every route: an error fault QA switched on, the key, the rate limit; after it, a slow-service fault. */
function gate(deps: IntegrationDeps) {
  const window = new Map<string, number[]>();
  return async (ctx: Context, next: Next): Promise<void> => {
    const faults = deps.faults();
    const f = faults.integration;
    if (f?.status) {
      deps.consumeIntegrationFault();
      if (f.status === 429) ctx.set('Retry-After', String(f.retryAfterSeconds));
      throw new AppError({
        code: f.status === 429 ? ERROR_CODES.rateLimited : ERROR_CODES.internal,
        status: f.status,
        message: f.status === 429 ? 'too many requests' : 'internal error',
      });
    }
    const token = bearerToken(ctx.get('authorization'));
    const key = token ? deps.store.get('key', token) : undefined;
    if (!key) throw new UnauthorizedError('missing or unknown API key');
    if (faults.rateLimitPerMinute) limitRate(ctx, window, key, faults.rateLimitPerMinute, deps.clock.now());
    ctx.state.key = key;
    await next();
    // A slow service does the work and answers late: a caller that gives up must not lose the effect.
    if (f?.delayMs) await sleep(f.delayMs);
  };
}

/** Counts the request against its key's last minute; past the limit, 429 with Retry-After until the oldest leaves it. */
function limitRate(ctx: Context, window: Map<string, number[]>, key: ApiKey, perMinute: number, now: number): void {
  const recent = (window.get(key.id) ?? []).filter((t) => t > now - 60_000);
  if (recent.length >= perMinute) {
    ctx.set('Retry-After', String(Math.max(1, Math.ceil((recent[0]! + 60_000 - now) / 1000))));
    throw new AppError({ code: ERROR_CODES.rateLimited, status: 429, message: 'too many requests' });
  }
  window.set(key.id, [...recent, now]);
}

function mappingRoutes(router: Router, { store, faults }: IntegrationDeps): void {
  router.put('/mappings/:entityType/:serviceId', async (ctx) => {
    const key = ctx.state.key as ApiKey;
    const entityType = ctx.params.entityType as MappingEntityType;
    if (!MAPPING_ENTITY_TYPES.includes(entityType)) throw new ValidationError(`entityType must be one of ${MAPPING_ENTITY_TYPES.join(', ')}`, 'entityType');
    const body = validate(mappingRequestSchema, await readJson(ctx.req, 64 * 1024));
    // QA's refusal fault: answered as the service answers a real refusal, the record left as it is.
    const refuse = faults().mappings?.refuse;
    if (refuse === 404) throw new NotFoundError(`no ${entityType} ${ctx.params.serviceId}`);
    if (refuse === 409)
      throw new AppError({
        code: ERROR_CODES.mappingConflict,
        status: 409,
        message: `${entityType} ${ctx.params.serviceId} is already mapped to another externalId`,
      });
    const record = store.get(entityType, ctx.params.serviceId!) as Person | undefined;
    if (!record || record.clinicId !== key.clinicId) throw new NotFoundError(`no ${entityType} ${ctx.params.serviceId}`);
    if (record.externalId !== null && record.externalId !== body.externalId)
      throw new AppError({ code: ERROR_CODES.mappingConflict, status: 409, message: `${entityType} ${record.id} is already mapped to another externalId` });
    store.put(entityType, { ...record, externalId: body.externalId } as never);
    ctx.body = { resource: { type: 'mapping', entityType, serviceId: record.id, externalId: body.externalId } };
  });
}
