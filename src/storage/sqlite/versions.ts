// Entity versions in SQLite. On disk (entity_versions), written in the same transaction as the event's applied
// mark; and, for a patient snapshot already in the EMR whose event has not committed yet, in memory, so that a
// concurrent older snapshot of the same patient sees it at once without a commit (and an fsync) of its own.
// What is on disk is also kept in memory for the entities seen lately, so the stale check of the next event
// reads no row. Both memories are right only because one process owns an SQLite database.
import type { Db } from '../../sqlite/open.ts';
import type { AppliedVersion, EntityVersions } from '../versions.ts';

/** The SQLite implementation, with the two steps ProcessingQueue.commit runs around its transaction. */
export interface SqliteEntityVersions extends EntityVersions {
  /** Inside the caller's transaction: records a version (never moves an entity back). Returns the version stored now. */
  write(entityKey: string, v: AppliedVersion, eventId: string): AppliedVersion;
  /**
   * After the caller's transaction: `stored` (what write returned) is on disk, and `noted`, the version
   * noted for the same snapshot, need not be kept in memory any more.
   */
  settle(entityKey: string, stored: AppliedVersion, noted?: AppliedVersion): void;
}

/** Versions on disk kept in memory, at most (past it, the oldest is read again when needed). */
const KNOWN_MAX = 20_000;

export function createSqliteEntityVersions(db: Db): SqliteEntityVersions {
  const read = db.prepare('SELECT occurred_at AS occurredAt, snapshot_hash AS hash FROM entity_versions WHERE entity_key = ?');
  const upsert = db.prepare(`
    INSERT INTO entity_versions (entity_key, occurred_at, event_id, snapshot_hash) VALUES (?, ?, ?, ?)
    ON CONFLICT (entity_key) DO UPDATE SET occurred_at = excluded.occurred_at, event_id = excluded.event_id,
      snapshot_hash = coalesce(excluded.snapshot_hash, entity_versions.snapshot_hash)
    WHERE excluded.occurred_at >= entity_versions.occurred_at`);
  // What is on disk, for the keys read or settled lately (null: no row). Only this processor writes
  // entity_versions (one adapter process owns a database), and a key being written is left out until its
  // transaction has committed, so this never runs ahead of the disk.
  const known = new Map<string, AppliedVersion | null>();
  const remember = (key: string, v: AppliedVersion | null) => {
    known.delete(key);
    if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value as string);
    known.set(key, v);
  };
  const onDisk = (key: string): AppliedVersion | undefined => {
    const k = known.get(key);
    return k === undefined ? (read.get(key) as AppliedVersion | undefined) : (k ?? undefined);
  };
  const pending = new Map<string, AppliedVersion>();
  return {
    async newest(key) {
      let stored = known.get(key);
      if (stored === undefined) {
        stored = (read.get(key) as AppliedVersion | undefined) ?? null;
        remember(key, stored);
      }
      const noted = pending.get(key);
      if (!noted) return stored ?? undefined;
      return !stored || noted.occurredAt >= stored.occurredAt ? noted : stored;
    },
    // Kept in memory only; it reaches the disk with its event's applied mark (a crash before that repeats an
    // unchanged snapshot: a no-op).
    async note(key, v) {
      const noted = pending.get(key);
      if (!noted || v.occurredAt >= noted.occurredAt) pending.set(key, v);
    },
    write(key, v, eventId) {
      // What the upsert leaves, computed rather than read back.
      const before = onDisk(key);
      upsert.run(key, v.occurredAt, eventId, v.hash);
      known.delete(key);
      if (before && v.occurredAt < before.occurredAt) return before;
      return { occurredAt: v.occurredAt, hash: v.hash ?? before?.hash ?? null };
    },
    settle(key, stored, noted) {
      remember(key, stored);
      if (noted && pending.get(key) === noted) pending.delete(key);
    },
  };
}
