// The audit trail in PostgreSQL: an entry and its targets in one statement; pages newest first by id (ids come
// from a sequence, so a replica's entry may commit after a higher id: a page read meanwhile misses it once).
import { type AuditRow, type AuditStore, toAuditRecord } from '../audit.ts';
import type { Pool } from './pool.ts';

export function createPostgresAuditStore(pool: Pool): AuditStore {
  return {
    async record(e) {
      const { rows } = await pool.query<{ id: number }>(
        `WITH entry AS (INSERT INTO audit_log (at, actor, door, action, targets, from_address, outcome)
                        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id),
              t AS (INSERT INTO audit_targets (audit_id, target) SELECT entry.id, x FROM entry, unnest($8::text[]) AS x
                    ON CONFLICT DO NOTHING)
         SELECT id FROM entry`,
        [e.at, e.actor, e.door, e.action, JSON.stringify(e.targets), e.from, e.outcome, [...new Set(e.targets)]],
      );
      return Number(rows[0]!.id);
    },
    async page(q) {
      const { rows } = await pool.query<AuditRow>(
        `SELECT id, at, actor, door, action, targets, from_address, outcome FROM audit_log
         WHERE ($1::text IS NULL OR actor = $1) AND ($2::text IS NULL OR action = $2)
           AND ($3::bigint IS NULL OR at >= $3) AND ($4::bigint IS NULL OR at < $4)
           AND ($5::bigint IS NULL OR id < $5)
           AND ($6::text IS NULL OR id IN (SELECT audit_id FROM audit_targets WHERE target = $6))
         ORDER BY id DESC LIMIT $7`,
        [q.actor ?? null, q.action ?? null, q.since ?? null, q.until ?? null, q.before ?? null, q.target ?? null, q.limit],
      );
      return rows.map(toAuditRecord);
    },
    async prune(before) {
      // Their targets cascade.
      const r = await pool.query('DELETE FROM audit_log WHERE at < $1', [before]);
      return r.rowCount ?? 0;
    },
  };
}
