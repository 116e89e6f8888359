// The document outbox on SQLite (better-sqlite3, synchronous underneath; each method returns a settled
// promise). One process owns the database, which makes two shortcuts sound here: every send lease is freed
// at start (its holder is gone), and requests enqueued here are held in memory until sent.
//
// A row carries its request (a PDF in base64, often 100 KB or more) while it may still be sent, and SQLite
// stores a row's columns in order: reading any column after `request` (state, lease_until, ...) walks the
// request's overflow pages, and changing the row's size rewrites the whole request. So the statements of the
// send path are shaped to touch a queued row as little as they can:
// - a new row is not read back;
// - a new row's lease_until and next_attempt_at are times (its creation: free, and due) rather than NULL and
//   0, so that taking its lease changes no column's size and SQLite overwrites the row in place (the pages
//   that changed) instead of writing it, request and all, again;
// - a claimed row's next_attempt_at is its lease's end, so the due statement, walking the outbox_due index
//   by next_attempt_at, never reaches a row in flight;
// - the outcomes of sends that ended are recorded in one transaction with the next claim (settle): one
//   commit, so one fsync, for all of them;
// - a claimed row comes without its request, and the requests enqueued here and not sent yet are held in
//   memory, parsed, up to a bound: a send neither reads its request back nor parses it again (requestOf);
//   after a restart, or past the bound, it is read from the row.
//
// A request is stored sealed for its row by `sealer` (../documents-requests.ts), sealed before the transaction
// that writes it; without one, in clear (createClearSealer).
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import type { Db } from '../../sqlite/open.ts';
import { createRequestMemory } from '../documents-request-memory.ts';
import { DEFAULT_REQUEST_MEMORY_CHARS, type DocumentStore, type DocumentStoreOptions, storeSettings } from '../documents.ts';
import { createSqliteFollowUps } from './documents-follow-ups.ts';
import { createSqliteScanLedger } from './documents-scan.ts';
import { createSqliteSendQueue } from './documents-send.ts';
import { createSqliteOutboxViews } from './documents-views.ts';
import { createEnqueue, createOutcomeRecorder } from './documents-writes.ts';

export function createSqliteDocumentStore(db: Db, clock: Clock, sealer?: Sealer, opts?: DocumentStoreOptions): DocumentStore;
/** The older form: options only, requests in clear. */
export function createSqliteDocumentStore(db: Db, clock: Clock, opts: DocumentStoreOptions): DocumentStore;
export function createSqliteDocumentStore(db: Db, clock: Clock, sealerOrOpts?: Sealer | DocumentStoreOptions, options?: DocumentStoreOptions): DocumentStore {
  const { sealer, opts } = storeSettings(sealerOrOpts, options);
  const memory = createRequestMemory(opts.requestMemoryChars ?? DEFAULT_REQUEST_MEMORY_CHARS);
  const enqueue = createEnqueue(db, clock, memory.keep);
  const recordOutcome = createOutcomeRecorder(db, clock);
  return {
    ...createSqliteSendQueue(db, clock, { enqueue, recordOutcome, memory, sealer }),
    ...createSqliteFollowUps(db, clock),
    ...createSqliteOutboxViews(db),
    ...createSqliteScanLedger(db, clock, enqueue, sealer),
  };
}
