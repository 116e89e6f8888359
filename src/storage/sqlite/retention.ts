// Retention of the processor's rows in SQLite, each pass one immediate transaction. An event's history rows go
// with it (no foreign key: they are deleted here, by the events being deleted).
import { checkpointWal, type Db } from '../../sqlite/open.ts';
import type { RetentionStore } from '../retention.ts';

export function createSqliteRetentionStore(db: Db): RetentionStore {
  // Finished events' bodies, and dismissed dead letters' (a replayed one finishes like any other event).
  const dropBodies = db.prepare(`
    UPDATE inbox_events SET body = NULL
    WHERE body IS NOT NULL AND id IN (
      SELECT inbox_id FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < @before
      UNION ALL SELECT inbox_id FROM processing WHERE state = 'dismissed' AND dismissed_at < @before)`);
  // The newest inbox row always stays: SQLite reuses the largest rowid once it is deleted, and the
  // processor takes in rows by id, so a reused id would hide a new event behind its cursor.
  const dropHistory = db.prepare(`
    DELETE FROM event_history WHERE inbox_id < (SELECT max(id) FROM inbox_events) AND inbox_id IN (
      SELECT inbox_id FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ?)`);
  const dropEvents = db.prepare(`
    DELETE FROM inbox_events WHERE id < (SELECT max(id) FROM inbox_events) AND id IN (
      SELECT inbox_id FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ?)`);
  const dropProcessing = db.prepare(
    "DELETE FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ? AND inbox_id NOT IN (SELECT id FROM inbox_events)",
  );
  // The counts of what was received (the console's) are kept as long as the events' ids.
  const dropMinutes = db.prepare('DELETE FROM inbox_minutes WHERE minute < ?');
  const dropSentMappings = db.prepare("DELETE FROM mapping_outbox WHERE state = 'sent' AND updated_at < ?");
  const pruneEvents = db.transaction((bodiesBefore: number, eventsBefore: number) => {
    const bodies = dropBodies.run({ before: bodiesBefore }).changes;
    dropHistory.run(eventsBefore);
    // The inbox rows go first (their processing rows cascade); the second statement is for a
    // connection opened without foreign keys.
    const events = dropEvents.run(eventsBefore).changes;
    dropProcessing.run(eventsBefore);
    dropMinutes.run(eventsBefore);
    return { bodies, events };
  });
  return {
    async pruneEvents(c) {
      const pruned = pruneEvents.immediate(c.bodiesBefore, c.eventsBefore);
      // What was dropped leaves the WAL and the file's free pages now, not at some later checkpoint.
      if (pruned.bodies > 0 || pruned.events > 0) checkpointWal(db, 'TRUNCATE');
      return pruned;
    },
    pruneSentMappings: async (before) => dropSentMappings.run(before).changes,
  };
}
