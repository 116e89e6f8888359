// The stores a pusher takes, on an SQLite database (in memory unless a path is given): the document outbox,
// the mappings its patient links go to, and the in-process coordination of one process per database.
import type { Clock } from '../../src/clock.ts';
import { type Db, type OpenDatabaseOptions, openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { DocumentStoreOptions } from '../../src/storage/documents.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { createSqliteMappingStore } from '../../src/storage/sqlite/mappings.ts';

export const openTestDatabase = (path = ':memory:', opts: Pick<OpenDatabaseOptions, 'checkpoints'> = {}): Db =>
  openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, ...opts });

export function sqlitePusherStores(db: Db, clock: Clock, opts: DocumentStoreOptions = {}) {
  return { documents: createSqliteDocumentStore(db, clock, opts), mappings: createSqliteMappingStore(db, clock), coordination: createSqliteCoordination() };
}
