// SQL shared by the PostgreSQL statements of the document outbox, and the writes that both the send queue and
// the scan's filing transaction use: a new row, and new statuses, each statement writing the history rows of
// what it changed (a data-modifying WITH).
import type { Clock } from '../../clock.ts';
import type { DocumentRequest } from '../../contract/documents.ts';
import type { PreparedDocument } from '../documents-requests.ts';
import { type Outcome, type OutboxRow, outcomeValues } from '../documents.ts';
import type { Pool, PoolClient } from './pool.ts';

/** A pool (one statement, its own transaction) or a connection inside a transaction. */
export type Queryable = Pool | PoolClient;

/** isFinal (../documents.ts) as SQL over the alias `t`, for the statements that must not move a final row. */
export const FINAL = "(t.state IN ('SENT', 'SUPPRESSED') OR (t.state = 'FAILED' AND t.error_code IS NULL))";

/** Every column but `request`, over the alias `t`. */
export const ROW_WITHOUT_REQUEST =
  't.external_id, t.document_type, t.source, t.emr_document_id, t.emr_version, t.emr_patient_id, t.state, t.status_reason, t.error_code, t.service_id, t.patient_service_id, t.release_after, t.sent_at, t.attempts, t.next_attempt_at, t.lease_until, t.next_poll_at, t.emr_synced, t.created_at, t.updated_at, t.document_size, t.document_sha256, t.trace_context';

/** In key order: transactions that update the same rows lock them in the same order (no deadlock between two). */
export const byExternalId = <T extends { externalId: string }>(items: readonly T[]): T[] =>
  [...items].sort((a, b) => (a.externalId < b.externalId ? -1 : a.externalId > b.externalId ? 1 : 0));

/**
 * Inserts a new row, queued or (refused by the checks) REJECTED, unless the externalId has one: the unique key
 * decides between replicas enqueueing the same document at once (the second waits for the first's commit,
 * then does nothing and reads the row that stands). The request comes sealed (../documents-requests.ts);
 * `kept` is handed a new row's plain request.
 */
export async function insertDocument(
  q: Queryable,
  clock: Clock,
  { document: e, request: prepared }: PreparedDocument,
  kept: (externalId: string, request: DocumentRequest, chars: number) => void,
): Promise<{ row: OutboxRow; created: boolean }> {
  const request = prepared?.stored ?? null;
  const now = clock.now();
  const inserted = await q.query<Omit<OutboxRow, 'request'>>(
    `WITH ins AS (
       INSERT INTO outbox_documents AS t (external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, request, state, status_reason, error_code, emr_synced, next_attempt_at, lease_until, created_at, updated_at, document_size, document_sha256, trace_context)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $12, $12, $13, $14, $15)
       ON CONFLICT (external_id) DO NOTHING
       RETURNING ${ROW_WITHOUT_REQUEST}),
     h AS (INSERT INTO document_history (external_id, at, status, attempt, detail) SELECT external_id, $12, state, NULL, error_code FROM ins)
     SELECT * FROM ins`,
    [
      e.externalId,
      e.documentType,
      e.source,
      e.emrDocumentId ?? null,
      e.emrVersion ?? null,
      e.emrPatientId ?? null,
      request,
      e.rejected ? 'REJECTED' : 'queued',
      e.rejected?.reason ?? null,
      e.rejected?.code ?? null,
      e.rejected && e.emrDocumentId ? 0 : 1,
      now,
      prepared?.digest?.size ?? null,
      prepared?.digest?.sha256 ?? null,
      e.traceContext ?? null,
    ],
  );
  const created = inserted.rows[0];
  if (created) {
    if (e.request && prepared) kept(e.externalId, e.request, prepared.json.length);
    return { row: { ...created, request }, created: true };
  }
  // A statement of its own: its snapshot sees the row whose insert this one waited for and yielded to.
  const standing = await q.query<OutboxRow>('SELECT * FROM outbox_documents WHERE external_id = $1', [e.externalId]);
  return { row: standing.rows[0]!, created: false };
}

/**
 * New statuses of rows, in one statement; a final row never moves again (a late answer, a HELD that crossed a
 * document.delivered, changes nothing). The request is kept while the document may still be sent: queued, or
 * failed before the service took it; its file's size and SHA-256 stay after it.
 */
export async function recordOutcomes(q: Queryable, clock: Clock, outcomes: readonly { externalId: string; outcome: Outcome }[]): Promise<void> {
  if (!outcomes.length) return;
  const sorted = byExternalId(outcomes);
  const values = sorted.map((o) => outcomeValues(o.outcome));
  const column = <K extends keyof (typeof values)[number]>(k: K) => values.map((v) => v[k]);
  // A history row for each row whose status or code the outcome changed (`before`: the rows as the statement
  // found them; a WITH's statements share one snapshot).
  await q.query(
    `WITH o AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[])
         AS o(external_id, state, reason, code, service_id, patient_service_id, release_after, sent_at, next_poll_at)),
     before AS (SELECT t.external_id, t.state, t.error_code FROM outbox_documents t JOIN o ON o.external_id = t.external_id),
     u AS (
       UPDATE outbox_documents t SET state = o.state, status_reason = o.reason, error_code = o.code, service_id = coalesce(o.service_id, t.service_id),
         patient_service_id = coalesce(o.patient_service_id, t.patient_service_id), release_after = o.release_after, sent_at = coalesce(o.sent_at, t.sent_at),
         next_poll_at = o.next_poll_at, request = CASE WHEN o.state = 'queued' OR (o.state = 'FAILED' AND o.code IS NOT NULL) THEN t.request ELSE NULL END,
         lease_until = NULL, emr_synced = CASE WHEN t.emr_document_id IS NULL THEN 1 ELSE 0 END, updated_at = $10
       FROM o WHERE t.external_id = o.external_id AND NOT ${FINAL}
       RETURNING t.external_id, t.state, t.error_code, t.status_reason, t.attempts)
     INSERT INTO document_history (external_id, at, status, attempt, detail)
     SELECT u.external_id, $10, u.state, u.attempts, coalesce(u.error_code, u.status_reason) FROM u JOIN before b ON b.external_id = u.external_id
     WHERE b.state IS DISTINCT FROM u.state OR b.error_code IS DISTINCT FROM u.error_code
     ORDER BY u.external_id`,
    [
      sorted.map((o) => o.externalId),
      column('state'),
      column('reason'),
      column('code'),
      column('serviceId'),
      column('patientServiceId'),
      column('releaseAfter'),
      column('sentAt'),
      column('nextPollAt'),
      clock.now(),
    ],
  );
}
