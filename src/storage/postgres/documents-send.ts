// The send side of the PostgreSQL outbox, shared by replicas. A claim picks due rows whose lease is free or ran
// out FOR UPDATE SKIP LOCKED (rows another replica is claiming at this moment are passed over, never waited
// for; a row whose lease another replica took and committed meanwhile is re-checked after the lock and left
// out: a live lease is never taken) and takes their lease, which is also their next_attempt_at. settle records
// what became of sends that ended (each kind in one statement) and claims the next rows in one transaction.
// A retry or a give-back changes a row only while it still holds the lease it was claimed with. No lease is
// freed at start: another replica may be alive and sending; a dead one's leases run out and are claimed then.
// A request enqueued by this replica is handed back from memory (../documents-request-memory.ts explains why
// that is sound with replicas); any other is read from its row and opened (../documents-requests.ts). A retry and an operator's resend write their
// history rows in the same statement (a data-modifying WITH).
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import type { RequestMemory } from '../documents-request-memory.ts';
import { openStoredRequest, prepareDocument } from '../documents-requests.ts';
import type { ClaimedRow, NewDocument, OutboxRow, SendEnd, SendQueue } from '../documents.ts';
import { byExternalId, insertDocument, type Queryable, recordOutcomes, ROW_WITHOUT_REQUEST } from './documents-sql.ts';
import { type Pool, withTransaction } from './pool.ts';

type Ended<K extends 'retry' | 'unsent'> = Extract<SendEnd, Record<K, unknown>>;

/** Claims up to `limit` due rows with a lease until `now + leaseMs`; the rows in the order they were due. */
async function claim<Row extends ClaimedRow>(q: Queryable, clock: Clock, limit: number, leaseMs: number, columns: string): Promise<Row[]> {
  const now = clock.now();
  const { rows } = await q.query<Row & { due_at: number }>(
    `WITH due AS (
       SELECT external_id, next_attempt_at FROM outbox_documents
       WHERE state = 'queued' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
       ORDER BY next_attempt_at LIMIT $2
       FOR UPDATE SKIP LOCKED)
     UPDATE outbox_documents t SET lease_until = $3, next_attempt_at = $3, attempts = t.attempts + 1
     FROM due WHERE t.external_id = due.external_id
     RETURNING ${columns}, due.next_attempt_at AS due_at`,
    [now, limit, now + leaseMs],
  );
  return rows.sort((a, b) => a.due_at - b.due_at).map(({ due_at: _, ...row }) => row as unknown as Row);
}

async function recordRetries(q: Queryable, clock: Clock, ended: readonly Ended<'retry'>[]): Promise<void> {
  if (!ended.length) return;
  const retries = byExternalId(ended);
  await q.query(
    `WITH u AS (
       UPDATE outbox_documents t SET next_attempt_at = r.at, lease_until = NULL, error_code = r.code, status_reason = r.reason, updated_at = $6
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[]) AS r(external_id, lease, at, code, reason)
       WHERE t.external_id = r.external_id AND t.state = 'queued' AND t.lease_until = r.lease
       RETURNING t.external_id, t.attempts, r.code)
     INSERT INTO document_history (external_id, at, status, attempt, detail) SELECT external_id, $6, 'retrying', attempts, code FROM u ORDER BY external_id`,
    [
      retries.map((r) => r.externalId),
      retries.map((r) => r.leaseUntil),
      retries.map((r) => r.retry.at),
      retries.map((r) => r.retry.code),
      retries.map((r) => r.retry.reason),
      clock.now(),
    ],
  );
}

/** Claimed and never sent: the lease ends now, the row is due at once, the attempt is not counted. */
async function giveBack(q: Queryable, clock: Clock, ended: readonly Ended<'unsent'>[]): Promise<void> {
  if (!ended.length) return;
  const unsent = byExternalId(ended);
  await q.query(
    `UPDATE outbox_documents t SET lease_until = $3, next_attempt_at = least(t.next_attempt_at, $3), attempts = greatest(t.attempts - 1, 0)
     FROM unnest($1::text[], $2::bigint[]) AS u(external_id, lease)
     WHERE t.external_id = u.external_id AND t.state = 'queued' AND t.lease_until = u.lease`,
    [unsent.map((u) => u.externalId), unsent.map((u) => u.leaseUntil), clock.now()],
  );
}

export function createPostgresSendQueue(pool: Pool, clock: Clock, memory: RequestMemory, sealer: Sealer): SendQueue {
  const enqueue = async (e: NewDocument) => insertDocument(pool, clock, prepareDocument(sealer, e), memory.keep);

  async function recordEnded(q: Queryable, ended: readonly SendEnd[]): Promise<void> {
    const outcomes = ended.filter((e): e is Extract<SendEnd, { outcome: unknown }> => 'outcome' in e);
    await recordOutcomes(q, clock, outcomes);
    await recordRetries(
      q,
      clock,
      ended.filter((e): e is Ended<'retry'> => 'retry' in e),
    );
    await giveBack(
      q,
      clock,
      ended.filter((e): e is Ended<'unsent'> => 'unsent' in e),
    );
  }

  return {
    enqueue,
    claimDue: (limit, leaseMs) => claim<OutboxRow>(pool, clock, limit, leaseMs, 't.*'),
    recordOutcome: (externalId, outcome) => recordOutcomes(pool, clock, [{ externalId, outcome }]),
    async settle(ended, limit, leaseMs) {
      if (!ended.length && limit <= 0) return [];
      if (!ended.length) return claim<ClaimedRow>(pool, clock, limit, leaseMs, ROW_WITHOUT_REQUEST);
      return withTransaction(pool, async (client) => {
        await recordEnded(client, ended);
        return limit > 0 ? claim<ClaimedRow>(client, clock, limit, leaseMs, ROW_WITHOUT_REQUEST) : [];
      });
    },
    async anyDue() {
      const { rows } = await pool.query("SELECT 1 FROM outbox_documents WHERE state = 'queued' AND next_attempt_at <= $1 LIMIT 1", [clock.now()]);
      return rows.length > 0;
    },
    async requestOf(externalId) {
      const kept = memory.take(externalId);
      if (kept) return kept;
      const { rows } = await pool.query<{ request: string | null }>('SELECT request FROM outbox_documents WHERE external_id = $1', [externalId]);
      const stored = rows[0]?.request;
      return stored ? openStoredRequest(sealer, externalId, stored) : null;
    },
    async resend(externalId) {
      const { rowCount } = await pool.query(
        `WITH u AS (
           UPDATE outbox_documents SET state = 'queued', status_reason = NULL, error_code = NULL, attempts = 0, next_attempt_at = 0, lease_until = NULL, updated_at = $1
           WHERE external_id = $2 AND state = 'FAILED' AND error_code IS NOT NULL AND request IS NOT NULL
           RETURNING external_id)
         INSERT INTO document_history (external_id, at, status, attempt, detail) SELECT external_id, $1, 'retried', NULL, NULL FROM u`,
        [clock.now(), externalId],
      );
      return rowCount === 1;
    },
    releaseLeases: async () => 0,
  };
}
