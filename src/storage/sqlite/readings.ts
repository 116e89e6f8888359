// The processor's backlog in SQLite, read when metrics are scraped: open events plus inbox rows past the
// intake cursor, and the mapping outbox's pending rows. The oldest open event's age leaves out the events queued
// behind a waiting one (docs/crosswalk.md): those wait for a person, and have their own gauge.
import type { Db } from '../../sqlite/open.ts';
import type { ProcessorReadings } from '../processing.ts';

/** A waiting event of the open row's entity, ahead of it (processing_unfinished serves it). */
const BEHIND_WAITING = "SELECT 1 FROM processing w WHERE w.entity_key = p.entity_key AND w.inbox_id < p.inbox_id AND w.state = 'waiting'";

export function createSqliteProcessorReadings(db: Db): ProcessorReadings {
  const cursor = db.prepare('SELECT last_inbox_id FROM processor_cursor WHERE id = 1').pluck();
  const open = db.prepare("SELECT count(*) FROM processing WHERE state IN ('pending', 'retrying')").pluck();
  const untaken = db.prepare('SELECT count(*) FROM inbox_events WHERE id > ?').pluck();
  // The received time intake copied onto each processing row: the open rows alone are read (processing_open_order),
  // not their inbox rows, whose received_at lies past the body. A row taken in before that copy reads its inbox row.
  // An entity's events queued behind its waiting one wait for a person's mapping, not for the EMR: left out.
  const oldestOpen = db
    .prepare(
      `SELECT min(coalesce(p.received_at, (SELECT e.received_at FROM inbox_events e WHERE e.id = p.inbox_id))) FROM processing p
       WHERE p.state IN ('pending', 'retrying') AND NOT EXISTS (${BEHIND_WAITING})`,
    )
    .pluck();
  const oldestUntaken = db.prepare('SELECT received_at FROM inbox_events WHERE id > ? ORDER BY id LIMIT 1').pluck();
  const mappingsPending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();
  const oldestMapping = db.prepare("SELECT min(created_at) FROM mapping_outbox WHERE state = 'pending'").pluck();
  return {
    depth: async () => (open.get() as number) + (untaken.get(cursor.get()) as number),
    async oldestOpenReceivedAt() {
      const times = [oldestOpen.get(), oldestUntaken.get(cursor.get())].filter((t): t is number => typeof t === 'number');
      return times.length ? Math.min(...times) : undefined;
    },
    mappingsPending: async () => mappingsPending.get() as number,
    oldestPendingMappingAt: async () => (oldestMapping.get() as number | null) ?? undefined,
  };
}
