// Retention: finished events keep their row (and so their eventId, which the receiver's dedupe needs)
// for RETENTION_EVENT_ID_DAYS, and their body for RETENTION_BODY_DAYS. Dead letters, dismissed ones and
// events not yet final are never pruned. The same RETENTION_EVENT_ID_DAYS prunes finished rows of the
// document outbox (final and written back to the EMR) and of the mapping outbox (sent); rows still
// queued, HELD, unsynced, pending or dead stay.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../database/open.ts';
import { createFinishedDocumentPruner } from '../pusher/outbox.ts';
import { createSentMappingPruner } from '../mappings/outbox.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Pruned {
  bodies: number;
  events: number;
  documents: number;
  mappings: number;
}

export interface Retention {
  /** Deletes what is past its retention, in one transaction; says how many of each. */
  prune(): Pruned;
}

export function createRetention(db: Db, clock: Clock, settings: Config['retention']): Retention {
  const dropBodies = db.prepare(`
    UPDATE inbox_events SET body = NULL
    WHERE body IS NOT NULL AND id IN (
      SELECT inbox_id FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ?)`);
  // The newest inbox row always stays: SQLite reuses the largest rowid once it is deleted, and the
  // processor takes in rows by id, so a reused id would hide a new event behind its cursor.
  const dropEvents = db.prepare(`
    DELETE FROM inbox_events WHERE id < (SELECT max(id) FROM inbox_events) AND id IN (
      SELECT inbox_id FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ?)`);
  const dropProcessing = db.prepare(
    "DELETE FROM processing WHERE state IN ('applied', 'discarded_stale') AND finished_at < ? AND inbox_id NOT IN (SELECT id FROM inbox_events)",
  );
  const dropDocuments = createFinishedDocumentPruner(db);
  const dropMappings = createSentMappingPruner(db);
  const prune = db.transaction((): Pruned => {
    const now = clock.now();
    const bodies = dropBodies.run(now - settings.bodyDays * DAY_MS).changes;
    const cutoff = now - Math.max(7, settings.eventIdDays) * DAY_MS;
    // The inbox rows go first (their processing rows cascade); the second statement is for a
    // connection opened without foreign keys.
    const events = dropEvents.run(cutoff).changes;
    dropProcessing.run(cutoff);
    return { bodies, events, documents: dropDocuments(cutoff), mappings: dropMappings(cutoff) };
  });
  return { prune: () => prune.immediate() };
}
