// The processor's queue in SQLite: inbox rows past a cursor are taken in (one process takes them in, so a
// cursor is enough), each entity's oldest open event is handed out with the lease of ./lease.ts, and a batch's
// outcomes are written in one immediate transaction (one fsync) that also claims the next batch. The versions
// it writes are settled in the versions' memory once that transaction has committed. Each commit also writes
// the events' history rows (./event-history.ts), one statement; intake copies each event's received time.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import { parseInboxBody, parseIntakeBodies, type StoredBody } from '../inbox-bodies.ts';
import type { ClaimedEvent, EventOutcome, Intake, NextClaim, ProcessingQueue, TakenEvent } from '../processing.ts';
import type { AppliedVersion } from '../versions.ts';
import { createSqliteEventHistory, type SqliteEventHistory } from './event-history.ts';
import { createLeaseClaim } from './lease.ts';
import type { MappingRows } from './mappings.ts';
import type { SqliteEntityVersions } from './versions.ts';

/** Inbox rows taken in per intake, at most. */
const INTAKE_BATCH = 500;

/**
 * The events due now, each its entity's oldest open one, oldest first: it walks the open events in inbox
 * order (processing_open_order, so applied and discarded rows kept for dedupe are never read) and keeps
 * those that head their entity (processing_unfinished: a waiting event heads its entity too, so the entity's later
 * events queue behind it).
 */
export const NEXT_EVENTS_SQL = `
    SELECT p.inbox_id AS inboxId, e.event_id AS eventId, p.entity_key AS entityKey, p.attempts, e.trace_context AS traceContext
    FROM processing p JOIN inbox_events e ON e.id = p.inbox_id
    WHERE p.state IN ('pending', 'retrying')
      AND p.inbox_id = (SELECT min(q.inbox_id) FROM processing q WHERE q.entity_key = p.entity_key AND q.state IN ('pending', 'retrying', 'waiting'))
      AND p.next_attempt_at <= @now
      AND (p.lease_until IS NULL OR p.lease_until <= @now)
    ORDER BY p.inbox_id
    LIMIT @limit`;

/**
 * Intake: inbox rows past the cursor become processing rows (pending, or dead when not an event, or when the
 * body does not open: ../inbox-bodies.ts), in one transaction.
 */
function createIntake(db: Db, clock: Clock, history: SqliteEventHistory, sealer: Sealer): (limit: number) => Intake {
  const cursor = db.prepare('SELECT last_inbox_id FROM processor_cursor WHERE id = 1').pluck();
  const newRows = db.prepare('SELECT id, event_id, body, received_at FROM inbox_events WHERE id > ? ORDER BY id LIMIT ?');
  const insert = db.prepare(
    'INSERT INTO processing (inbox_id, entity_key, state, last_error, finished_at, received_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const moveCursor = db.prepare('UPDATE processor_cursor SET last_inbox_id = ? WHERE id = 1');
  const intake = db.transaction((limit: number): Intake => {
    const rows = newRows.all(cursor.get(), limit) as { id: number; event_id: string; body: Buffer | null; received_at: number }[];
    const parsed = parseIntakeBodies(
      sealer,
      rows.map((r) => ({ eventId: r.event_id, body: r.body })),
    );
    const dead: Intake['dead'] = [];
    const events: TakenEvent[] = [];
    rows.forEach((row, i) => {
      const p = parsed[i]!;
      if (p.ok) {
        insert.run(row.id, p.entityKey, 'pending', null, null, row.received_at);
        events.push({ inboxId: row.id, event: p.event, entityKey: p.entityKey });
      } else {
        const now = clock.now();
        insert.run(row.id, null, 'dead', p.reason, now, row.received_at);
        history.parked(row.id, now, p.reason);
        dead.push({ eventId: row.event_id, reason: p.reason });
      }
    });
    if (rows.length) moveCursor.run(rows[rows.length - 1]!.id);
    return { taken: rows.length, events, dead };
  });
  return (limit) => intake.immediate(limit);
}

/** A version written in a batch, to settle in memory once the batch has committed. */
interface Written {
  entityKey: string;
  stored: AppliedVersion;
  noted?: AppliedVersion;
}

/** Writes one outcome, inside the batch's transaction; adds the versions it stored to `written`. */
function createOutcomeWriter(db: Db, clock: Clock, versions: SqliteEntityVersions, mappings: MappingRows) {
  const finish = db.prepare('UPDATE processing SET state = ?, last_error = ?, lease_until = NULL, finished_at = ? WHERE inbox_id = ?');
  const retry = db.prepare("UPDATE processing SET state = 'retrying', next_attempt_at = ?, last_error = ?, lease_until = NULL WHERE inbox_id = ?");
  const wait = db.prepare(
    "UPDATE processing SET state = 'retrying', next_attempt_at = ?, last_error = ?, lease_until = NULL, attempts = max(attempts - 1, 0) WHERE inbox_id = ?",
  );
  const untried = db.prepare('UPDATE processing SET lease_until = NULL, attempts = max(attempts - 1, 0) WHERE inbox_id = ?');
  const waiting = createWaitingWriter(db, clock);
  return (o: EventOutcome, written: Written[]): void => {
    switch (o.kind) {
      case 'applied':
        for (const v of o.versions)
          written.push({ entityKey: v.entityKey, stored: versions.write(v.entityKey, v.version, v.eventId), ...(v.noted ? { noted: v.version } : {}) });
        for (const c of o.claims) mappings.enqueue(c.entityType, c.serviceId, c.emrId, o.traceContext);
        finish.run('applied', null, clock.now(), o.inboxId);
        return;
      case 'discarded_stale':
      case 'dead':
        finish.run(o.kind, o.reason, clock.now(), o.inboxId);
        return;
      case 'retry':
        retry.run(o.at, o.reason, o.inboxId);
        return;
      case 'wait':
        wait.run(o.at, o.reason, o.inboxId);
        return;
      case 'release':
        untried.run(o.inboxId);
        return;
      case 'waiting':
        waiting(o);
        return;
    }
  };
}

/**
 * A waiting outcome: the records it lacks that are still unmapped become its waits, in this transaction, so a
 * mapping committed before it is never waited for; with none left the event is due again at once.
 */
function createWaitingWriter(db: Db, clock: Clock) {
  const clear = db.prepare('DELETE FROM crosswalk_waits WHERE inbox_id = ?');
  const lack = db.prepare(`INSERT INTO crosswalk_waits (inbox_id, entity_type, service_id, ord, since)
    SELECT @inboxId, @entityType, @serviceId, @ord, @now
    WHERE NOT EXISTS (SELECT 1 FROM crosswalk c WHERE c.entity_type = @entityType AND c.service_id = @serviceId AND c.emr_id IS NOT NULL)`);
  const mark = db.prepare(`UPDATE processing SET
      state = CASE WHEN EXISTS (SELECT 1 FROM crosswalk_waits w WHERE w.inbox_id = @inboxId) THEN 'waiting' ELSE 'pending' END,
      last_error = @reason, lease_until = NULL, attempts = max(attempts - 1, 0), next_attempt_at = @now
    WHERE inbox_id = @inboxId`);
  return (o: Extract<EventOutcome, { kind: 'waiting' }>): void => {
    const now = clock.now();
    clear.run(o.inboxId);
    for (const [ord, l] of o.lacks.entries()) lack.run({ inboxId: o.inboxId, entityType: l.entityType, serviceId: l.serviceId, ord, now });
    mark.run({ inboxId: o.inboxId, reason: o.reason, now });
  };
}

export function createSqliteProcessingQueue(
  db: Db,
  clock: Clock,
  parts: { versions: SqliteEntityVersions; mappings: MappingRows; sealer?: Sealer },
): ProcessingQueue {
  const sealer = parts.sealer ?? createClearSealer();
  const heads = db.prepare(NEXT_EVENTS_SQL);
  const lease = db.prepare('UPDATE processing SET lease_until = ?, attempts = attempts + 1 WHERE inbox_id = ? AND (lease_until IS NULL OR lease_until <= ?)');
  const stored = db.prepare('SELECT event_id AS eventId, body FROM inbox_events WHERE id = ?');
  const release = db.prepare("UPDATE processing SET lease_until = NULL WHERE lease_until IS NOT NULL AND state IN ('pending', 'retrying')");
  const history = createSqliteEventHistory(db);
  const intake = createIntake(db, clock, history, sealer);
  const claim = createLeaseClaim(db, clock, {
    due: (now, limit) => heads.all({ now, limit }) as ClaimedEvent[],
    take: (c, until, now) => lease.run(until, c.inboxId, now).changes === 1,
  });
  const writeOutcome = createOutcomeWriter(db, clock, parts.versions, parts.mappings);
  const commit = db.transaction((outcomes: EventOutcome[], next: NextClaim | undefined) => {
    const written: Written[] = [];
    for (const o of outcomes) writeOutcome(o, written);
    history.outcomes(outcomes, clock.now());
    return { claimed: next ? claim(next.limit, next.leaseMs) : [], written };
  });

  return {
    intake: async (limit = INTAKE_BATCH) => intake(limit),
    claim: async (limit, leaseMs) => claim(limit, leaseMs),
    async event(inboxId) {
      const row = stored.get(inboxId) as StoredBody | undefined;
      return row ? parseInboxBody(sealer, row) : { ok: false, reason: 'body_pruned: the event is no longer stored' };
    },
    async commit(outcomes, next) {
      const { claimed, written } = commit.immediate(outcomes, next);
      for (const w of written) parts.versions.settle(w.entityKey, w.stored, w.noted);
      return claimed;
    },
    // One process owns the database: every lease belongs to a process that is gone.
    releaseLeases: async () => release.run().changes,
  };
}
