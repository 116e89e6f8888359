// The processor's backlog in PostgreSQL, read when metrics are scraped: open events plus inbox rows not taken
// in yet (inbox_intake), and the mapping outbox's pending rows. The oldest open event's age leaves out the events
// queued behind a waiting one (docs/crosswalk.md): those wait for a person, and have their own gauge.
import type { ProcessorReadings } from '../processing.ts';
import type { Pool } from './pool.ts';

const OPEN = "p.state IN ('pending', 'retrying')";
/** A waiting event of the open row's entity, ahead of it: the open row waits for a person's mapping, not for the EMR. */
const BEHIND_WAITING = "SELECT 1 FROM processing w WHERE w.entity_key = p.entity_key AND w.inbox_id < p.inbox_id AND w.state = 'waiting'";

export function createPostgresProcessorReadings(pool: Pool): ProcessorReadings {
  const one = async <T>(sql: string): Promise<T | undefined> => {
    const { rows } = await pool.query<{ v: T | null }>(sql);
    return rows[0]?.v ?? undefined;
  };
  return {
    depth: async () => (await one<number>(`SELECT (SELECT count(*) FROM processing p WHERE ${OPEN}) + (SELECT count(*) FROM inbox_intake) AS v`)) ?? 0,
    // least() passes over a NULL (nothing of that kind waits). The open rows' received time is the one intake copied
    // onto them (a row taken in before that copy reads its inbox row).
    oldestOpenReceivedAt: () =>
      one<number>(`SELECT least(
        (SELECT min(coalesce(p.received_at, (SELECT e.received_at FROM inbox_events e WHERE e.id = p.inbox_id))) FROM processing p
         WHERE ${OPEN} AND NOT EXISTS (${BEHIND_WAITING})),
        (SELECT min(e.received_at) FROM inbox_intake q JOIN inbox_events e ON e.id = q.inbox_id)) AS v`),
    mappingsPending: async () => (await one<number>("SELECT count(*) AS v FROM mapping_outbox WHERE state = 'pending'")) ?? 0,
    oldestPendingMappingAt: () => one<number>("SELECT min(created_at) AS v FROM mapping_outbox WHERE state = 'pending'"),
  };
}
