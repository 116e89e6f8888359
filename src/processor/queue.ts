// The processor's queue over SQLite: takes new inbox rows in (validating them once), hands out the
// oldest open event of each entity whose turn has come (so one entity's events apply in order and a
// failing one holds back only its own entity), and records every state change. Work is held with the
// lease of ../work/lease.ts: an event whose lease ran out (a crash, a restart) is handed out again.
// Every method but intake and claim writes inside the caller's transaction, if it has one: the processor
// commits the outcomes of a claimed batch together (see write-batch.ts).
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { createLeaseClaim } from '../work/lease.ts';
import { parseStoredEvent, type ParsedEvent } from './parse.ts';

/** Inbox rows taken in per intake, at most. */
const INTAKE_BATCH = 500;

/** 'dismissed': a dead letter a person set aside for good (see dead-letters.ts). */
export type EventState = 'pending' | 'retrying' | 'applied' | 'discarded_stale' | 'dead' | 'dismissed';

export interface ClaimedEvent {
  inboxId: number;
  eventId: string;
  entityKey: string;
  attempts: number;
}

/** An inbox row taken in as a valid event, with the event as validated (so it need not be parsed again). */
export interface TakenEvent extends ParsedEvent {
  inboxId: number;
}

export interface Queue {
  /** Takes in inbox rows stored since the last call; unparseable ones become dead letters at once. */
  intake(limit?: number): { taken: number; events: TakenEvent[]; dead: { eventId: string; reason: string }[] };
  /** Claims up to `limit` due events, at most one per entity (its oldest open one). */
  claim(limit: number, leaseMs: number): ClaimedEvent[];
  /** The stored body of an event (null once retention pruned it). */
  body(inboxId: number): Buffer | null;
  finish(inboxId: number, state: 'applied' | 'discarded_stale' | 'dead', reason?: string): void;
  retryLater(inboxId: number, at: number, reason: string): void;
  /** Like retryLater, but the attempt is not counted: the failure was a dependency's incident, not this event's. */
  waitLater(inboxId: number, at: number, reason: string): void;
  /** Hands a claimed event back untried: its lease freed, its attempt not counted, due as it was. */
  release(inboxId: number): void;
  /** Events not yet final (including inbox rows not yet taken in). */
  depth(): number;
  /** Frees every lease (a restart: the process that held them is gone). Returns how many. */
  releaseLeases(): number;
}

/** Queue.intake: inbox rows past the cursor become processing rows (pending, or dead when not an event). */
function createIntake(db: Db, clock: Clock): Queue['intake'] {
  const cursor = db.prepare('SELECT last_inbox_id FROM processor_cursor WHERE id = 1').pluck();
  const newRows = db.prepare('SELECT id, event_id, body FROM inbox_events WHERE id > ? ORDER BY id LIMIT ?');
  const insert = db.prepare('INSERT INTO processing (inbox_id, entity_key, state, last_error, finished_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const moveCursor = db.prepare('UPDATE processor_cursor SET last_inbox_id = ? WHERE id = 1');
  const intakeTx = db.transaction((limit: number) => {
    const rows = newRows.all(cursor.get(), limit) as { id: number; event_id: string; body: Buffer | null }[];
    const dead: { eventId: string; reason: string }[] = [];
    const events: TakenEvent[] = [];
    for (const row of rows) {
      const parsed = parseStoredEvent(row.body, row.event_id);
      if (parsed.ok) {
        insert.run(row.id, parsed.entityKey, 'pending', null, null);
        events.push({ inboxId: row.id, event: parsed.event, entityKey: parsed.entityKey });
      } else {
        insert.run(row.id, null, 'dead', parsed.reason, clock.now());
        dead.push({ eventId: row.event_id, reason: parsed.reason });
      }
    }
    if (rows.length) moveCursor.run(rows[rows.length - 1]!.id);
    return { taken: rows.length, events, dead };
  });
  return (limit = INTAKE_BATCH) => intakeTx.immediate(limit);
}

/**
 * The events due now, each its entity's oldest open one, oldest first: it walks the open events in inbox
 * order (processing_open_order, so applied and discarded rows kept for dedupe are never read) and keeps
 * those that head their entity (processing_open).
 */
export const NEXT_EVENTS_SQL = `
    SELECT p.inbox_id AS inboxId, e.event_id AS eventId, p.entity_key AS entityKey, p.attempts
    FROM processing p JOIN inbox_events e ON e.id = p.inbox_id
    WHERE p.state IN ('pending', 'retrying')
      AND p.inbox_id = (SELECT min(q.inbox_id) FROM processing q WHERE q.entity_key = p.entity_key AND q.state IN ('pending', 'retrying'))
      AND p.next_attempt_at <= @now
      AND (p.lease_until IS NULL OR p.lease_until <= @now)
    ORDER BY p.inbox_id
    LIMIT @limit`;

export function createQueue(db: Db, clock: Clock): Queue {
  const heads = db.prepare(NEXT_EVENTS_SQL);
  const lease = db.prepare('UPDATE processing SET lease_until = ?, attempts = attempts + 1 WHERE inbox_id = ? AND (lease_until IS NULL OR lease_until <= ?)');
  const finish = db.prepare('UPDATE processing SET state = ?, last_error = ?, lease_until = NULL, finished_at = ? WHERE inbox_id = ?');
  const retry = db.prepare("UPDATE processing SET state = 'retrying', next_attempt_at = ?, last_error = ?, lease_until = NULL WHERE inbox_id = ?");
  const wait = db.prepare(
    "UPDATE processing SET state = 'retrying', next_attempt_at = ?, last_error = ?, lease_until = NULL, attempts = max(attempts - 1, 0) WHERE inbox_id = ?",
  );
  const body = db.prepare('SELECT body FROM inbox_events WHERE id = ?').pluck();
  const untried = db.prepare('UPDATE processing SET lease_until = NULL, attempts = max(attempts - 1, 0) WHERE inbox_id = ?');
  const release = db.prepare("UPDATE processing SET lease_until = NULL WHERE lease_until IS NOT NULL AND state IN ('pending', 'retrying')");

  const claim = createLeaseClaim(db, clock, {
    due: (now, limit) => heads.all({ now, limit }) as ClaimedEvent[],
    take: (c, until, now) => lease.run(until, c.inboxId, now).changes === 1,
  });

  return {
    intake: createIntake(db, clock),
    claim,
    body: (inboxId) => (body.get(inboxId) as Buffer | null | undefined) ?? null,
    finish: (inboxId, state, reason) => {
      finish.run(state, reason ?? null, clock.now(), inboxId);
    },
    retryLater: (inboxId, at, reason) => {
      retry.run(at, reason, inboxId);
    },
    waitLater: (inboxId, at, reason) => {
      wait.run(at, reason, inboxId);
    },
    release: (inboxId) => {
      untried.run(inboxId);
    },
    depth: createQueueReadings(db).depth,
    releaseLeases: () => release.run().changes,
  };
}

/** Read-only views of the queue, for metrics: how many events wait, and since when the oldest does. */
export interface QueueReadings {
  /** Events not yet final (including inbox rows not yet taken in). */
  depth(): number;
  /** When the oldest of those was received (epoch ms); undefined when none waits. */
  oldestOpenReceivedAt(): number | undefined;
}

export function createQueueReadings(db: Db): QueueReadings {
  const cursor = db.prepare('SELECT last_inbox_id FROM processor_cursor WHERE id = 1').pluck();
  const open = db.prepare("SELECT count(*) FROM processing WHERE state IN ('pending', 'retrying')").pluck();
  const untaken = db.prepare('SELECT count(*) FROM inbox_events WHERE id > ?').pluck();
  const oldestOpen = db
    .prepare("SELECT min(e.received_at) FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE p.state IN ('pending', 'retrying')")
    .pluck();
  const oldestUntaken = db.prepare('SELECT received_at FROM inbox_events WHERE id > ? ORDER BY id LIMIT 1').pluck();
  return {
    depth: () => (open.get() as number) + (untaken.get(cursor.get()) as number),
    oldestOpenReceivedAt() {
      const times = [oldestOpen.get(), oldestUntaken.get(cursor.get())].filter((t): t is number => typeof t === 'number');
      return times.length ? Math.min(...times) : undefined;
    },
  };
}
