// The follow-ups of sent documents in the SQLite outbox: HELD rows to poll, statuses to write back to the
// EMR, and document events for documents this outbox never had.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import type { DocumentStore, FollowUps, OutboxRow } from '../documents.ts';

export function createSqliteFollowUps(db: Db, clock: Clock): FollowUps & Pick<DocumentStore, 'recordUnmatchedEvent'> {
  // By the outbox_poll index, as the send queue's due statement (not every HELD row, sorted, per pass).
  const heldDue = db.prepare("SELECT * FROM outbox_documents INDEXED BY outbox_poll WHERE state = 'HELD' AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?");
  const poll = db.prepare('UPDATE outbox_documents SET next_poll_at = ? WHERE external_id = ?');
  const unsynced = db.prepare('SELECT * FROM outbox_documents WHERE emr_synced = 0 ORDER BY updated_at LIMIT ?');
  const synced = db.prepare('UPDATE outbox_documents SET emr_synced = 1 WHERE external_id = ? AND updated_at = ?');
  const markAllSynced = db.transaction((rows: readonly Pick<OutboxRow, 'external_id' | 'updated_at'>[]) => {
    for (const r of rows) synced.run(r.external_id, r.updated_at);
  });
  const unmatched = db.prepare('INSERT INTO unmatched_document_events (event_id, external_id, status, occurred_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
  return {
    heldDue: async (limit) => heldDue.all(clock.now(), limit) as OutboxRow[],
    pollAgainAt: async (externalId, at) => void poll.run(at, externalId),
    unsynced: async (limit) => unsynced.all(limit) as OutboxRow[],
    markSynced: async (r) => void synced.run(r.external_id, r.updated_at),
    markAllSynced: async (rows) => void (rows.length && markAllSynced.immediate(rows)),
    recordUnmatchedEvent: async (e) => void unmatched.run(e.eventId, e.externalId, e.status, e.occurredAt),
  };
}
