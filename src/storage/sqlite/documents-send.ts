// The send side of the SQLite outbox: claims by the due index, a claim overwriting the row in place, the
// outcomes of sends that ended recorded in one transaction with the next claim (settle), requests held in
// memory for sends enqueued here (any other is read from its row and opened: ../documents-requests.ts), and
// every lease freed at start (one process owns the database). A retry and an operator's resend write their
// history row in their own transaction.
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import type { Db } from '../../sqlite/open.ts';
import type { RequestMemory } from '../documents-request-memory.ts';
import { openStoredRequest, prepareDocument } from '../documents-requests.ts';
import type { ClaimedRow, Outcome, OutboxRow, SendEnd, SendQueue } from '../documents.ts';
import { createSqliteDocumentHistory } from './document-history.ts';
import { ROW_WITHOUT_REQUEST } from './documents-sql.ts';
import type { Enqueue } from './documents-writes.ts';

/** Claims up to `limit` due rows with a lease of `leaseMs`, inside the caller's transaction; each with its new lease and attempt count. */
type ClaimIn<Row> = (limit: number, leaseMs: number) => Row[];

function createClaims(db: Db, clock: Clock) {
  // By the outbox_due index, in its order: the first rows due are read, and no others. Left to itself, the
  // planner takes the outbox_state index and sorts, reading every queued row (and its request) per claim.
  const dueWhere =
    "FROM outbox_documents INDEXED BY outbox_due WHERE state = 'queued' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at LIMIT ?";
  const due = db.prepare(`SELECT * ${dueWhere}`);
  const dueWithoutRequest = db.prepare(`SELECT ${ROW_WITHOUT_REQUEST} ${dueWhere}`);
  // The lease's end is the next attempt's time too: the due statement, walking the outbox_due index by
  // next_attempt_at, then never reaches a row in flight (reading its lease would walk its request's pages).
  const lease = db.prepare(
    "UPDATE outbox_documents SET lease_until = @until, next_attempt_at = @until, attempts = attempts + 1 WHERE external_id = @externalId AND state = 'queued' AND (lease_until IS NULL OR lease_until <= @now)",
  );
  function claimFrom<Row extends ClaimedRow>(select: typeof due): ClaimIn<Row> {
    return (limit, leaseMs) => {
      const now = clock.now();
      const until = now + leaseMs;
      return (select.all(now, now, limit) as Row[])
        .filter((r) => lease.run({ until, externalId: r.external_id, now }).changes === 1)
        .map((r) => ({ ...r, attempts: r.attempts + 1, lease_until: until, next_attempt_at: until }));
    };
  }
  return { claimRows: claimFrom<OutboxRow>(due), claimWithoutRequest: claimFrom<ClaimedRow>(dueWithoutRequest) };
}

export function createSqliteSendQueue(
  db: Db,
  clock: Clock,
  parts: { enqueue: Enqueue; recordOutcome: (externalId: string, o: Outcome) => void; memory: RequestMemory; sealer: Sealer },
): SendQueue {
  const { enqueue, recordOutcome, memory, sealer } = parts;
  const storedRequest = db.prepare('SELECT request FROM outbox_documents WHERE external_id = ?').pluck();
  const retry = db.prepare(
    "UPDATE outbox_documents SET next_attempt_at = ?, lease_until = NULL, error_code = ?, status_reason = ?, updated_at = ? WHERE external_id = ? AND state = 'queued' AND lease_until = ?",
  );
  const unsent = db.prepare(
    "UPDATE outbox_documents SET lease_until = @now, next_attempt_at = min(next_attempt_at, @now), attempts = max(attempts - 1, 0) WHERE external_id = @externalId AND state = 'queued' AND lease_until = @lease",
  );
  const resend = db.prepare(`
    UPDATE outbox_documents SET state = 'queued', status_reason = NULL, error_code = NULL, attempts = 0, next_attempt_at = 0, lease_until = NULL, updated_at = ?
    WHERE external_id = ? AND state = 'FAILED' AND error_code IS NOT NULL AND request IS NOT NULL`);
  const anyDue = db.prepare("SELECT 1 FROM outbox_documents INDEXED BY outbox_due WHERE state = 'queued' AND next_attempt_at <= ? LIMIT 1").pluck();
  // A live lease ends now, and its row is due at once again: it had been due (its next_attempt_at is only
  // its lease's end). A lease that ran out holds nothing (and a new row's lease_until is its creation).
  const releaseLeases = db.prepare(
    "UPDATE outbox_documents SET lease_until = @now, next_attempt_at = min(next_attempt_at, @now) WHERE state = 'queued' AND lease_until > @now",
  );
  const { claimRows, claimWithoutRequest } = createClaims(db, clock);
  const claimDue = db.transaction(claimRows);
  const history = createSqliteDocumentHistory(db, () => clock.now());
  const resendRecorded = db.transaction((externalId: string) => {
    const changed = resend.run(clock.now(), externalId).changes === 1;
    if (changed) history.record(externalId, 'retried', null);
    return changed;
  });

  function recordEnd(e: SendEnd): void {
    if ('outcome' in e) recordOutcome(e.externalId, e.outcome);
    else if ('retry' in e) {
      if (retry.run(e.retry.at, e.retry.code, e.retry.reason, clock.now(), e.externalId, e.leaseUntil).changes === 1)
        history.record(e.externalId, 'retrying', e.retry.code, true);
    } else unsent.run({ externalId: e.externalId, now: clock.now(), lease: e.leaseUntil });
  }
  const settle = db.transaction((ended: readonly SendEnd[], limit: number, leaseMs: number) => {
    for (const e of ended) recordEnd(e);
    return limit > 0 ? claimWithoutRequest(limit, leaseMs) : [];
  });

  return {
    // Sealed first: nothing asynchronous may run inside the insert's transaction.
    enqueue: async (e) => enqueue(prepareDocument(sealer, e)),
    claimDue: async (limit, leaseMs) => claimDue.immediate(limit, leaseMs),
    recordOutcome: async (externalId, o) => recordOutcome(externalId, o),
    settle: async (ended, limit, leaseMs) => (ended.length || limit > 0 ? settle.immediate(ended, limit, leaseMs) : []),
    anyDue: async () => anyDue.get(clock.now()) !== undefined,
    async requestOf(externalId) {
      const kept = memory.take(externalId);
      if (kept) return kept;
      const stored = storedRequest.get(externalId) as string | null | undefined;
      return stored ? openStoredRequest(sealer, externalId, stored) : null;
    },
    resend: async (externalId) => resendRecorded.immediate(externalId),
    releaseLeases: async () => releaseLeases.run({ now: clock.now() }).changes,
  };
}
