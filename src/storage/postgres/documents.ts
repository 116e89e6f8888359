// The document outbox on PostgreSQL, shared by every replica: claims FOR UPDATE SKIP LOCKED, dedupe by the
// unique externalId, outcomes and the next claim in one transaction, no lease freed at start. The row shapes
// are SQLite's (BIGINT read as numbers, ./pool.ts). A request's TOASTed text is not rewritten when a claim
// updates its row's other columns, so the claim needs none of the SQLite implementation's care for it. A
// request is stored sealed for its row by `sealer` (../documents-requests.ts); without one, in clear.
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import { createRequestMemory } from '../documents-request-memory.ts';
import { DEFAULT_REQUEST_MEMORY_CHARS, type DocumentStore, type DocumentStoreOptions, storeSettings } from '../documents.ts';
import { createPostgresFollowUps } from './documents-follow-ups.ts';
import { createPostgresScanLedger } from './documents-scan.ts';
import { createPostgresSendQueue } from './documents-send.ts';
import { createPostgresOutboxViews } from './documents-views.ts';
import type { Pool } from './pool.ts';

export function createPostgresDocumentStore(pool: Pool, clock: Clock, sealer?: Sealer, opts?: DocumentStoreOptions): DocumentStore;
/** The older form: options only, requests in clear. */
export function createPostgresDocumentStore(pool: Pool, clock: Clock, opts: DocumentStoreOptions): DocumentStore;
export function createPostgresDocumentStore(
  pool: Pool,
  clock: Clock,
  sealerOrOpts?: Sealer | DocumentStoreOptions,
  options?: DocumentStoreOptions,
): DocumentStore {
  const { sealer, opts } = storeSettings(sealerOrOpts, options);
  const memory = createRequestMemory(opts.requestMemoryChars ?? DEFAULT_REQUEST_MEMORY_CHARS);
  return {
    ...createPostgresSendQueue(pool, clock, memory, sealer),
    ...createPostgresFollowUps(pool, clock),
    ...createPostgresOutboxViews(pool),
    ...createPostgresScanLedger(pool, clock, memory.keep, sealer),
  };
}
