// The synchronous writes of the SQLite outbox that both the send queue and the scan's filing transaction use:
// a new row, and a row's new status, each with its history row in the same transaction (a savepoint when the
// caller's transaction is open). A new row's request comes sealed already (../documents-requests.ts): sealing
// is asynchronous, and nothing asynchronous may run inside a better-sqlite3 transaction.
import type { Clock } from '../../clock.ts';
import type { DocumentRequest } from '../../contract/documents.ts';
import type { Db } from '../../sqlite/open.ts';
import type { PreparedDocument } from '../documents-requests.ts';
import { type Outcome, type OutboxRow, outcomeValues } from '../documents.ts';
import { createSqliteDocumentHistory } from './document-history.ts';
import { FINAL, ROW_WITHOUT_REQUEST } from './documents-sql.ts';

/** Writes a new row from a document whose request is prepared (sealed) already: synchronous, so it may run inside a transaction. */
export type Enqueue = (p: PreparedDocument) => { row: OutboxRow; created: boolean };

/**
 * A new row, queued or (refused by the checks) REJECTED; the first row for an externalId stands. A new row is
 * returned without reading its request back (the value just written is the request), and its plain request is
 * handed to `kept` to be held in memory.
 */
export function createEnqueue(db: Db, clock: Clock, kept: (externalId: string, request: DocumentRequest, chars: number) => void): Enqueue {
  const get = db.prepare('SELECT * FROM outbox_documents WHERE external_id = ?');
  const getNew = db.prepare(`SELECT ${ROW_WITHOUT_REQUEST} FROM outbox_documents WHERE external_id = ?`);
  // A new row's lease_until and next_attempt_at are its creation (free, and due) rather than NULL and 0, so
  // that taking its lease changes no column's size and SQLite overwrites the row in place.
  const insert = db.prepare(`
    INSERT INTO outbox_documents (external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, request, state, status_reason, error_code, emr_synced, next_attempt_at, lease_until, created_at, updated_at, document_size, document_sha256, trace_context)
    VALUES (@externalId, @documentType, @source, @emrDocumentId, @emrVersion, @emrPatientId, @request, @state, @reason, @code, @synced, @now, @now, @now, @now, @size, @sha256, @traceContext)
    ON CONFLICT (external_id) DO NOTHING`);
  const history = createSqliteDocumentHistory(db, () => clock.now());
  const insertRecorded = db.transaction((values: Record<string, unknown> & { externalId: string; state: 'queued' | 'REJECTED'; code: string | null }) => {
    const info = insert.run(values);
    if (info.changes === 1) history.record(values.externalId, values.state, values.code);
    return info;
  });
  return ({ document: e, request: prepared }) => {
    const request = prepared?.stored ?? null;
    const info = insertRecorded({
      externalId: e.externalId,
      documentType: e.documentType,
      source: e.source,
      emrDocumentId: e.emrDocumentId ?? null,
      emrVersion: e.emrVersion ?? null,
      emrPatientId: e.emrPatientId ?? null,
      request,
      state: e.rejected ? ('REJECTED' as const) : ('queued' as const),
      reason: e.rejected?.reason ?? null,
      code: e.rejected?.code ?? null,
      synced: e.rejected && e.emrDocumentId ? 0 : 1,
      now: clock.now(),
      size: prepared?.digest?.size ?? null,
      sha256: prepared?.digest?.sha256 ?? null,
      traceContext: e.traceContext ?? null,
    });
    if (info.changes !== 1) return { row: get.get(e.externalId) as OutboxRow, created: false };
    if (e.request && prepared) kept(e.externalId, e.request, prepared.json.length);
    return { row: { ...(getNew.get(e.externalId) as Omit<OutboxRow, 'request'>), request }, created: true };
  };
}

/** A row's new status; a final row never moves again. */
export function createOutcomeRecorder(db: Db, clock: Clock): (externalId: string, o: Outcome) => void {
  // Final rows never move again: a late answer (a HELD that crossed a document.delivered) changes nothing.
  // The request is kept while the document may still be sent: queued, or failed before the service took it;
  // its file's size and SHA-256 stay after it.
  const outcome = db.prepare(`
    UPDATE outbox_documents SET state = @state, status_reason = @reason, error_code = @code, service_id = coalesce(@serviceId, service_id),
      patient_service_id = coalesce(@patientServiceId, patient_service_id), release_after = @releaseAfter, sent_at = coalesce(@sentAt, sent_at),
      next_poll_at = @nextPollAt, request = CASE WHEN @state = 'queued' OR (@state = 'FAILED' AND @code IS NOT NULL) THEN request ELSE NULL END,
      lease_until = NULL, emr_synced = CASE WHEN emr_document_id IS NULL THEN 1 ELSE 0 END, updated_at = @now
    WHERE external_id = @externalId AND NOT ${FINAL}`);
  const history = createSqliteDocumentHistory(db, () => clock.now());
  const record = db.transaction((externalId: string, o: Outcome) => {
    history.outcome(externalId, o);
    outcome.run({ externalId, ...outcomeValues(o), now: clock.now() });
  });
  return (externalId, o) => record(externalId, o);
}
