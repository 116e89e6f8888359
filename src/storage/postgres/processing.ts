// The processor's queue in PostgreSQL, shared by every replica. Intake takes the rows of inbox_intake (the
// receiver writes one with each inbox row, in its transaction: see db/postgres/001_schema.sql), so a row whose
// id was handed out early but committed late is never passed over, as a cursor would; one replica takes in at
// a time (a transaction advisory lock, tried, never waited for), in inbox order, each row exactly once. Claims
// take each entity's oldest open event with the lease of ./lease.ts (FOR UPDATE SKIP LOCKED). A batch's
// outcomes are a few set-based statements in one transaction that also claims the next batch. Each statement
// that changes events writes their history rows too (a data-modifying WITH: no extra round trip), for the rows
// it really changed.
import type { Clock } from '../../clock.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import { parseInboxBody, parseIntakeBodies, type StoredBody } from '../inbox-bodies.ts';
import { outcomeHistory } from '../event-history.ts';
import type { ClaimedEvent, EventOutcome, Intake, NextClaim, ProcessingQueue, TakenEvent } from '../processing.ts';
import { leaseClaimSql } from './lease.ts';
import { type Pool, type PoolClient, withTransaction } from './pool.ts';
import { upsertVersions } from './versions.ts';

/** Inbox rows taken in per intake, at most. */
const INTAKE_BATCH = 500;

const OPEN = "('pending', 'retrying')";
/** Open or waiting: a waiting event heads its entity (its later events queue behind it) though it is never due. */
const UNFINISHED = "('pending', 'retrying', 'waiting')";

/** Held by the replica taking in, for its transaction; another replica that finds it held takes in nothing. */
const INTAKE_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended('emr-bridge:intake', 0)) AS taken";

const CLAIM_SQL = leaseClaimSql({
  table: 'processing',
  key: 'inbox_id',
  due: `t.state IN ${OPEN} AND t.next_attempt_at <= $1
        AND t.inbox_id = (SELECT min(q.inbox_id) FROM processing q WHERE q.entity_key = t.entity_key AND q.state IN ${UNFINISHED})`,
  order: 't.inbox_id',
  join: { from: 'inbox_events e', on: 'e.id = t.inbox_id' },
  returning: 't.inbox_id AS "inboxId", e.event_id AS "eventId", t.entity_key AS "entityKey", t.attempts, e.trace_context AS "traceContext"',
});

async function intakeIn(client: PoolClient, clock: Clock, sealer: Sealer, limit: number): Promise<Intake> {
  const none: Intake = { taken: 0, events: [], dead: [] };
  const lock = await client.query<{ taken: boolean }>(INTAKE_LOCK);
  if (!lock.rows[0]!.taken) return none;
  const { rows } = await client.query<{ id: number; event_id: string; body: Buffer | null; received_at: number }>(
    `SELECT q.inbox_id AS id, e.event_id, e.body, e.received_at FROM inbox_intake q JOIN inbox_events e ON e.id = q.inbox_id
     ORDER BY q.inbox_id LIMIT $1 FOR UPDATE OF q SKIP LOCKED`,
    [limit],
  );
  if (!rows.length) return none;
  const events: TakenEvent[] = [];
  const dead: Intake['dead'] = [];
  const columns = {
    id: [] as number[],
    key: [] as (string | null)[],
    state: [] as string[],
    error: [] as (string | null)[],
    finished: [] as (number | null)[],
    received: [] as number[],
  };
  // Opened while the intake lock is held: a body that does not open is parked, or the whole intake stops (../inbox-bodies.ts).
  const bodies = parseIntakeBodies(
    sealer,
    rows.map((r) => ({ eventId: r.event_id, body: r.body })),
  );
  for (const [i, row] of rows.entries()) {
    const parsed = bodies[i]!;
    columns.id.push(row.id);
    columns.received.push(row.received_at);
    if (parsed.ok) {
      columns.key.push(parsed.entityKey);
      columns.state.push('pending');
      columns.error.push(null);
      columns.finished.push(null);
      events.push({ inboxId: row.id, event: parsed.event, entityKey: parsed.entityKey });
    } else {
      columns.key.push(null);
      columns.state.push('dead');
      columns.error.push(parsed.reason);
      columns.finished.push(clock.now());
      dead.push({ eventId: row.event_id, reason: parsed.reason });
    }
  }
  await client.query(
    `WITH p AS (
       INSERT INTO processing (inbox_id, entity_key, state, last_error, finished_at, received_at)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) ON CONFLICT (inbox_id) DO NOTHING
       RETURNING inbox_id, state, last_error, finished_at)
     INSERT INTO event_history (inbox_id, at, state, attempt, reason)
     SELECT inbox_id, finished_at, 'dead', 0, last_error FROM p WHERE state = 'dead' ORDER BY inbox_id`,
    [columns.id, columns.key, columns.state, columns.error, columns.finished, columns.received],
  );
  await client.query('DELETE FROM inbox_intake WHERE inbox_id = ANY($1::bigint[])', [columns.id]);
  return { taken: rows.length, events, dead };
}

async function claimIn(client: Pool | PoolClient, clock: Clock, limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
  const now = clock.now();
  const { rows } = await client.query<ClaimedEvent>(CLAIM_SQL, [now, limit, now + leaseMs]);
  return rows.sort((a, b) => a.inboxId - b.inboxId);
}

/**
 * Writes a batch's outcomes, a statement per kind. Only open events change: one whose lease ran out while this
 * replica worked it, and that another replica has finished since, keeps the state it was given.
 */
async function writeOutcomes(client: PoolClient, clock: Clock, outcomes: readonly EventOutcome[]): Promise<void> {
  const finished = outcomes.filter((o) => o.kind === 'applied' || o.kind === 'discarded_stale' || o.kind === 'dead');
  const later = outcomes.filter((o) => o.kind === 'retry' || o.kind === 'wait');
  const released = outcomes.filter((o) => o.kind === 'release');
  const applied = outcomes.flatMap((o) => (o.kind === 'applied' ? [o] : []));
  // Noted versions were upserted when noted (EntityVersions.note): only the events' own are left to write.
  await upsertVersions(
    client,
    applied.flatMap((o) => o.versions.filter((v) => !v.noted)),
  );
  const claims = applied.flatMap((o) => o.claims.map((c) => ({ ...c, traceContext: o.traceContext ?? null })));
  if (claims.length) {
    const now = clock.now();
    await client.query(
      `INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at, trace_context)
       SELECT t, s, e, $4, $4, tc FROM unnest($1::text[], $2::text[], $3::text[], $5::text[]) AS c(t, s, e, tc) ON CONFLICT DO NOTHING`,
      [claims.map((c) => c.entityType), claims.map((c) => c.serviceId), claims.map((c) => c.emrId), now, claims.map((c) => c.traceContext)],
    );
  }
  if (finished.length)
    await client.query(
      `WITH u AS (
         UPDATE processing p SET state = o.state, last_error = o.reason, lease_until = NULL, finished_at = $4
         FROM unnest($1::bigint[], $2::text[], $3::text[], $5::text[]) WITH ORDINALITY AS o(id, state, reason, refs, n)
         WHERE p.inbox_id = o.id AND p.state IN ${OPEN}
         RETURNING p.inbox_id, p.state, p.attempts, p.last_error, o.refs, o.n)
       INSERT INTO event_history (inbox_id, at, state, attempt, reason, emr_refs) SELECT inbox_id, $4, state, attempts, last_error, refs FROM u ORDER BY n`,
      [
        finished.map((o) => o.inboxId),
        finished.map((o) => o.kind),
        finished.map((o) => ('reason' in o ? o.reason : null)),
        clock.now(),
        finished.map((o) => outcomeHistory(o)?.refs ?? null),
      ],
    );
  if (later.length)
    await client.query(
      `WITH u AS (
         UPDATE processing p SET state = 'retrying', next_attempt_at = o.at, last_error = o.reason, lease_until = NULL,
           attempts = CASE WHEN o.refund THEN greatest(p.attempts - 1, 0) ELSE p.attempts END
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::boolean[]) WITH ORDINALITY AS o(id, at, reason, refund, n)
         WHERE p.inbox_id = o.id AND p.state IN ${OPEN}
         RETURNING p.inbox_id, p.attempts, p.last_error, o.refund, o.n)
       INSERT INTO event_history (inbox_id, at, state, attempt, reason)
       SELECT inbox_id, $5, CASE WHEN refund THEN 'waiting' ELSE 'retrying' END, attempts + CASE WHEN refund THEN 1 ELSE 0 END, last_error
       FROM u ORDER BY n`,
      [
        later.map((o) => o.inboxId),
        later.map((o) => ('at' in o ? o.at : 0)),
        later.map((o) => ('reason' in o ? o.reason : null)),
        later.map((o) => o.kind === 'wait'),
        clock.now(),
      ],
    );
  await writeWaiting(
    client,
    clock,
    outcomes.flatMap((o) => (o.kind === 'waiting' ? [o] : [])),
  );
  if (released.length)
    await client.query(
      `UPDATE processing SET lease_until = NULL, attempts = greatest(attempts - 1, 0) WHERE inbox_id = ANY($1::bigint[]) AND state IN ${OPEN}`,
      [released.map((o) => o.inboxId)],
    );
}

/**
 * Waiting outcomes: the records each lacks that are still unmapped become its waits, and it waits while it has any
 * (else it is due again at once). The crosswalk rows are read FOR SHARE first, in one order: a mapping being
 * written now either commits before this reads them, or waits for this commit and then finds these waits to clear.
 */
async function writeWaiting(client: PoolClient, clock: Clock, waiting: Extract<EventOutcome, { kind: 'waiting' }>[]): Promise<void> {
  if (!waiting.length) return;
  const now = clock.now();
  const lacks = waiting.flatMap((o) => o.lacks.map((l, ord) => ({ id: o.inboxId, ...l, ord })));
  const keys = [...new Set(lacks.map((l) => `${l.entityType}\u0000${l.serviceId}`))].sort();
  await client.query(
    `SELECT 1 FROM crosswalk c JOIN unnest($1::text[], $2::text[]) AS k(t, s) ON c.entity_type = k.t AND c.service_id = k.s
     ORDER BY c.entity_type, c.service_id FOR SHARE OF c`,
    [keys.map((k) => k.split('\u0000')[0]), keys.map((k) => k.split('\u0000')[1])],
  );
  const ids = waiting.map((o) => o.inboxId);
  await client.query('DELETE FROM crosswalk_waits WHERE inbox_id = ANY($1::bigint[])', [ids]);
  await client.query(
    `INSERT INTO crosswalk_waits (inbox_id, entity_type, service_id, ord, since)
     SELECT l.id, l.t, l.s, l.ord, $5 FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[]) AS l(id, t, s, ord)
     WHERE NOT EXISTS (SELECT 1 FROM crosswalk c WHERE c.entity_type = l.t AND c.service_id = l.s AND c.emr_id IS NOT NULL)
     ON CONFLICT DO NOTHING`,
    [lacks.map((l) => l.id), lacks.map((l) => l.entityType), lacks.map((l) => l.serviceId), lacks.map((l) => l.ord), now],
  );
  await client.query(
    `WITH u AS (
       UPDATE processing p SET state = CASE WHEN EXISTS (SELECT 1 FROM crosswalk_waits w WHERE w.inbox_id = p.inbox_id) THEN 'waiting' ELSE 'pending' END,
         last_error = o.reason, lease_until = NULL, attempts = greatest(p.attempts - 1, 0), next_attempt_at = $3
       FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS o(id, reason, n)
       WHERE p.inbox_id = o.id AND p.state IN ${OPEN}
       RETURNING p.inbox_id, p.attempts, p.last_error, o.n)
     INSERT INTO event_history (inbox_id, at, state, attempt, reason)
     SELECT inbox_id, $3, 'waiting_for_mapping', attempts + 1, last_error FROM u ORDER BY n`,
    [ids, waiting.map((o) => o.reason), now],
  );
}

export function createPostgresProcessingQueue(pool: Pool, clock: Clock, sealer: Sealer = createClearSealer()): ProcessingQueue {
  return {
    intake: (limit = INTAKE_BATCH) => withTransaction(pool, (client) => intakeIn(client, clock, sealer, limit)),
    claim: (limit, leaseMs) => claimIn(pool, clock, limit, leaseMs),
    async event(inboxId) {
      const { rows } = await pool.query<StoredBody>('SELECT event_id AS "eventId", body FROM inbox_events WHERE id = $1', [inboxId]);
      return rows[0] ? parseInboxBody(sealer, rows[0]) : { ok: false, reason: 'body_pruned: the event is no longer stored' };
    },
    commit: (outcomes, next?: NextClaim) =>
      withTransaction(pool, async (client) => {
        await writeOutcomes(client, clock, outcomes);
        return next ? claimIn(client, clock, next.limit, next.leaseMs) : [];
      }),
    // Every other replica is alive as far as this one knows: a dead one's leases run out and are claimed then.
    releaseLeases: async () => 0,
  };
}
