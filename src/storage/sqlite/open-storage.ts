// The SQLite storage: one file, one process (the store lock), every store on one better-sqlite3 connection,
// coordination in memory.
import type { Clock } from '../../clock.ts';
import { createCommitQueue } from '../../sqlite/commit-queue.ts';
import { closeDatabase } from '../../sqlite/open.ts';
import { acquireStoreLock } from '../../sqlite/store-lock.ts';
import type { Storage, StorageDeps, StoreHold } from '../index.ts';
import { createMemorySignInFailures } from '../sign-in-failures.ts';
import { createSqliteAuditStore } from './audit.ts';
import { createSqliteConsoleSessionStore } from './console-sessions.ts';
import { createSqliteCoordination } from './coordination.ts';
import { createSqliteDocumentStore } from './documents.ts';
import { createSqliteEmrDowntimeStore } from './emr-downtime.ts';
import { createSqliteEmrState } from './emr-state.ts';
import { createSqliteInboxStore } from './inbox.ts';
import { createSqliteProcessorStores } from './processor-stores.ts';
import { createSqliteQuarantineStore } from './quarantine.ts';
import { openSqliteForServe } from './schema.ts';

/** The exclusive lock on `<path>.lock`; an in-memory database needs none. */
export function holdSqliteFile(path: string, clock: Clock): StoreHold {
  if (path === ':memory:') return { release: () => undefined };
  return acquireStoreLock(path, clock);
}

export function openSqliteStorage(path: string, deps: StorageDeps): Storage {
  const db = openSqliteForServe(path, deps.logger.child({ component: 'database' }));
  const coordination = createSqliteCoordination();
  // One group commit for the stores whose writes share one: an EMR port's notes ride with the mappings.
  const commits = createCommitQueue(db);
  const processor = createSqliteProcessorStores(db, deps.clock, deps.sealer, commits);
  return {
    engine: 'sqlite',
    where: path,
    // No wake-up per commit: one process polls its own file every PROCESSOR_POLL_MS, and a wake at webhook
    // rate made the processor search its queue between commits (measured: 2-3x serve's CPU per request).
    inbox: createSqliteInboxStore(db),
    processor,
    documents: createSqliteDocumentStore(db, deps.clock, deps.sealer),
    coordination,
    audit: createSqliteAuditStore(db),
    consoleSessions: createSqliteConsoleSessionStore(db),
    // One process per file: its own memory counts every failed sign-in the file's adapter hears.
    signInFailures: createMemorySignInFailures(),
    emrState: createSqliteEmrState(db, deps.clock, commits),
    emrDowntime: createSqliteEmrDowntimeStore(db),
    quarantine: createSqliteQuarantineStore(db, deps.clock, deps.sealer, { coordination }),
    async close() {
      await processor.close();
      await coordination.close();
      // The checkpoint thread's end too: it folds the WAL into the file, so nothing is left writing after close.
      await closeDatabase(db);
    },
  };
}
