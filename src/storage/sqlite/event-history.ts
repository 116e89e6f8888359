// The history rows of events in SQLite, statements run inside the caller's transaction (intake, a batch's
// commit), each one statement however many rows: intake's received rows are copied from the inbox rows it took
// in (by their id range, with their received time), a batch's outcomes go in as one JSON array (json_each).
// Measured against the processor benchmark: building rows in JavaScript for intake cost more than the copy.
import type { Db } from '../../database/open.ts';
import { outcomeHistory } from '../event-history.ts';
import type { EventOutcome } from '../processing.ts';

export interface SqliteEventHistory {
  /** A received row for each inbox row in (after, last], at its received time, in id order. */
  received(after: number, last: number): void;
  /** A dead row for an inbox row intake parked at once (after its received row). */
  parked(inboxId: number, at: number, reason: string): void;
  /** Writes a batch's outcomes' rows at `now`, each with its event's attempt as the batch left it. Call after the outcomes are written. */
  outcomes(outcomes: readonly EventOutcome[], now: number): void;
}

export function createSqliteEventHistory(db: Db): SqliteEventHistory {
  const received = db.prepare(`
    INSERT INTO event_history (inbox_id, at, state, attempt, reason)
    SELECT id, received_at, 'received', 0, NULL FROM inbox_events WHERE id > ? AND id <= ? ORDER BY id`);
  const parked = db.prepare("INSERT INTO event_history (inbox_id, at, state, attempt, reason) VALUES (?, ?, 'dead', 0, ?)");
  // CROSS JOIN: the rows in the order given, each event's processing row found by its key.
  const fromOutcomes = db.prepare(`
    INSERT INTO event_history (inbox_id, at, state, attempt, reason)
    SELECT p.inbox_id, ?, j.value ->> 1, p.attempts + (j.value ->> 2), j.value ->> 3
    FROM json_each(?) j CROSS JOIN processing p ON p.inbox_id = j.value ->> 0`);
  return {
    received(after, last) {
      if (last > after) received.run(after, last);
    },
    parked(inboxId, at, reason) {
      parked.run(inboxId, at, reason);
    },
    outcomes(outcomes, now) {
      const rows: [number, string, number, string | null][] = [];
      for (const o of outcomes) {
        const h = outcomeHistory(o);
        if (h) rows.push([h.inboxId, h.state, h.refund, h.reason]);
      }
      if (rows.length) fromOutcomes.run(now, JSON.stringify(rows));
    },
  };
}
