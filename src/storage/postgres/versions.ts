// Entity versions in PostgreSQL: read from the table every time (another replica may have written one a moment
// ago), and a noted snapshot upserted at once, forward only, so the next replica to take the patient sees it
// (early is safe: the EMR has it already, and a version never moves back).
import type { AppliedVersion, EntityVersions } from '../versions.ts';
import type { Pool, PoolClient } from './pool.ts';

/** Records versions, never moving an entity back; a newer time keeps the last digest when it brings none. */
export const UPSERT_VERSIONS_SQL = `
  INSERT INTO entity_versions AS v (entity_key, occurred_at, event_id, snapshot_hash)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
  ON CONFLICT (entity_key) DO UPDATE SET occurred_at = excluded.occurred_at, event_id = excluded.event_id,
    snapshot_hash = coalesce(excluded.snapshot_hash, v.snapshot_hash)
  WHERE excluded.occurred_at >= v.occurred_at`;

export interface VersionRow {
  entityKey: string;
  version: AppliedVersion;
  eventId: string;
}

/**
 * Upserts versions in one statement. One statement may not touch a key twice, so writes of one key are folded
 * first (in order, as the upserts one after another would leave them, the digest of the newest kept).
 */
export async function upsertVersions(client: Pool | PoolClient, writes: readonly VersionRow[]): Promise<void> {
  if (!writes.length) return;
  const folded = new Map<string, VersionRow>();
  for (const w of writes) {
    const before = folded.get(w.entityKey);
    if (!before) folded.set(w.entityKey, w);
    else if (w.version.occurredAt >= before.version.occurredAt)
      folded.set(w.entityKey, { ...w, version: { occurredAt: w.version.occurredAt, hash: w.version.hash ?? before.version.hash } });
  }
  const rows = [...folded.values()];
  await client.query(UPSERT_VERSIONS_SQL, [
    rows.map((r) => r.entityKey),
    rows.map((r) => r.version.occurredAt),
    rows.map((r) => r.eventId),
    rows.map((r) => r.version.hash),
  ]);
}

export function createPostgresEntityVersions(pool: Pool): EntityVersions {
  return {
    async newest(entityKey) {
      const { rows } = await pool.query<AppliedVersion>(
        'SELECT occurred_at AS "occurredAt", snapshot_hash AS hash FROM entity_versions WHERE entity_key = $1',
        [entityKey],
      );
      return rows[0];
    },
    note: (entityKey, version, eventId) => upsertVersions(pool, [{ entityKey, version, eventId }]),
  };
}
