// The processor's backlog in SQLite, read when metrics are scraped: open events plus inbox rows past the
// intake cursor, and the mapping outbox's pending rows.
import type { Db } from '../../sqlite/open.ts';
import type { ProcessorReadings } from '../processing.ts';

export function createSqliteProcessorReadings(db: Db): ProcessorReadings {
  const cursor = db.prepare('SELECT last_inbox_id FROM processor_cursor WHERE id = 1').pluck();
  const open = db.prepare("SELECT count(*) FROM processing WHERE state IN ('pending', 'retrying')").pluck();
  const untaken = db.prepare('SELECT count(*) FROM inbox_events WHERE id > ?').pluck();
  // The received time intake copied onto each processing row: the open rows alone are read (processing_open_order),
  // not their inbox rows, whose received_at lies past the body. A row taken in before that copy reads its inbox row.
  const oldestOpen = db
    .prepare(
      "SELECT min(coalesce(p.received_at, (SELECT e.received_at FROM inbox_events e WHERE e.id = p.inbox_id))) FROM processing p WHERE p.state IN ('pending', 'retrying')",
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
