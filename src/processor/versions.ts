// The newest snapshot applied per entity: what stale snapshots are judged against. On disk (entity_versions),
// written in the same transaction as the event's applied mark; and, for a patient snapshot already in the
// EMR whose event has not committed yet, in memory, so that a concurrent older snapshot of the same patient
// sees it at once without a commit (and an fsync) of its own.
import type { Db } from '../database/open.ts';

export interface AppliedVersion {
  occurredAt: string;
  /** Digest of the snapshot's fields the EMR keeps; null when not recorded. */
  hash: string | null;
}

export interface EntityVersions {
  /** The newest applied version, from disk or not yet committed. */
  newest(entityKey: string): AppliedVersion | undefined;
  /** A snapshot is in the EMR; its event will commit it. */
  note(entityKey: string, v: AppliedVersion): void;
  /** Inside the caller's transaction: records a version (never moves an entity back). */
  write(entityKey: string, v: AppliedVersion, eventId: string): void;
  /** After the caller's transaction: the memory entry is on disk now. */
  settle(entityKey: string, v: AppliedVersion): void;
}

export function createEntityVersions(db: Db): EntityVersions {
  const read = db.prepare('SELECT occurred_at AS occurredAt, snapshot_hash AS hash FROM entity_versions WHERE entity_key = ?');
  const upsert = db.prepare(`
    INSERT INTO entity_versions (entity_key, occurred_at, event_id, snapshot_hash) VALUES (?, ?, ?, ?)
    ON CONFLICT (entity_key) DO UPDATE SET occurred_at = excluded.occurred_at, event_id = excluded.event_id,
      snapshot_hash = coalesce(excluded.snapshot_hash, entity_versions.snapshot_hash)
    WHERE excluded.occurred_at >= entity_versions.occurred_at`);
  const pending = new Map<string, AppliedVersion>();
  return {
    newest(key) {
      const stored = read.get(key) as AppliedVersion | undefined;
      const noted = pending.get(key);
      if (!noted) return stored;
      return !stored || noted.occurredAt >= stored.occurredAt ? noted : stored;
    },
    note(key, v) {
      const noted = pending.get(key);
      if (!noted || v.occurredAt >= noted.occurredAt) pending.set(key, v);
    },
    write(key, v, eventId) {
      upsert.run(key, v.occurredAt, eventId, v.hash);
    },
    settle(key, v) {
      if (pending.get(key) === v) pending.delete(key);
    },
  };
}
