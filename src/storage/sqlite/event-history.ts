// The history rows of events in SQLite, statements run inside the caller's transaction (intake, a batch's
// commit): a batch's outcomes go in as one JSON array (json_each), one statement however many there are.
import type { Db } from '../../sqlite/open.ts';
import { outcomeHistory } from '../event-history.ts';
import type { EventOutcome } from '../processing.ts';

export interface SqliteEventHistory {
  /** A dead row for an inbox row intake parked at once. */
  parked(inboxId: number, at: number, reason: string): void;
  /** Writes a batch's outcomes' rows at `now`, each with its event's attempt as the batch left it. Call after the outcomes are written. */
  outcomes(outcomes: readonly EventOutcome[], now: number): void;
}

export function createSqliteEventHistory(db: Db): SqliteEventHistory {
  const parked = db.prepare("INSERT INTO event_history (inbox_id, at, state, attempt, reason) VALUES (?, ?, 'dead', 0, ?)");
  // CROSS JOIN: the rows in the order given, each event's processing row found by its key.
  const fromOutcomes = db.prepare(`
    INSERT INTO event_history (inbox_id, at, state, attempt, reason, emr_refs)
    SELECT p.inbox_id, ?, j.value ->> 1, p.attempts + (j.value ->> 2), j.value ->> 3, j.value ->> 4
    FROM json_each(?) j CROSS JOIN processing p ON p.inbox_id = j.value ->> 0`);
  return {
    parked(inboxId, at, reason) {
      parked.run(inboxId, at, reason);
    },
    outcomes(outcomes, now) {
      const rows: [number, string, number, string | null, string | null][] = [];
      for (const o of outcomes) {
        const h = outcomeHistory(o);
        if (h) rows.push([h.inboxId, h.state, h.refund, h.reason, h.refs]);
      }
      if (rows.length) fromOutcomes.run(now, JSON.stringify(rows));
    },
  };
}
