// The follow-ups of sent documents in the PostgreSQL outbox: HELD rows to poll, statuses to write back to the
// EMR, and document events for documents this outbox never had. The pusher runs its follow-ups in one replica
// at a time (the coordination's 'document-follow-ups'), so these are plain reads and writes.
import type { Clock } from '../../clock.ts';
import type { DocumentStore, FollowUps, OutboxRow } from '../documents.ts';
import type { Pool } from './pool.ts';

export function createPostgresFollowUps(pool: Pool, clock: Clock): FollowUps & Pick<DocumentStore, 'recordUnmatchedEvent'> {
  async function markAllSynced(rows: readonly Pick<OutboxRow, 'external_id' | 'updated_at'>[]): Promise<void> {
    if (!rows.length) return;
    // A row that changed since (another updated_at) is left for its new status.
    await pool.query(
      `UPDATE outbox_documents t SET emr_synced = 1 FROM unnest($1::text[], $2::bigint[]) AS s(external_id, updated_at)
       WHERE t.external_id = s.external_id AND t.updated_at = s.updated_at`,
      [rows.map((r) => r.external_id), rows.map((r) => r.updated_at)],
    );
  }
  return {
    async heldDue(limit) {
      const { rows } = await pool.query<OutboxRow>(
        "SELECT * FROM outbox_documents WHERE state = 'HELD' AND next_poll_at <= $1 ORDER BY next_poll_at LIMIT $2",
        [clock.now(), limit],
      );
      return rows;
    },
    async pollAgainAt(externalId, at) {
      await pool.query('UPDATE outbox_documents SET next_poll_at = $1 WHERE external_id = $2', [at, externalId]);
    },
    async unsynced(limit) {
      const { rows } = await pool.query<OutboxRow>('SELECT * FROM outbox_documents WHERE emr_synced = 0 ORDER BY updated_at LIMIT $1', [limit]);
      return rows;
    },
    markSynced: (r) => markAllSynced([r]),
    markAllSynced,
    async recordUnmatchedEvent(e) {
      await pool.query('INSERT INTO unmatched_document_events (event_id, external_id, status, occurred_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
        e.eventId,
        e.externalId,
        e.status,
        e.occurredAt,
      ]);
    },
  };
}
