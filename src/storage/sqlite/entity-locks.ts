// Entity locks on SQLite: one adapter process owns the database, so the sections in memory of
// ../entity-locks.ts are the whole of it.
export { createMemoryEntityLocks as createSqliteEntityLocks, type MemoryEntityLocks } from '../entity-locks.ts';
