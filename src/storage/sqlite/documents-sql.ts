// SQL shared by the SQLite statements of the document outbox.

/** isFinal (../documents.ts) as SQL, for the statements that must not move a final row. */
export const FINAL = "(state IN ('SENT', 'SUPPRESSED') OR (state = 'FAILED' AND error_code IS NULL))";

/** Every column but `request`, in the table's order: reading them still walks a stored request's pages, but copies none of it. */
export const ROW_WITHOUT_REQUEST =
  'external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, state, status_reason, error_code, service_id, patient_service_id, release_after, sent_at, attempts, next_attempt_at, lease_until, next_poll_at, emr_synced, created_at, updated_at, document_size, document_sha256, trace_context';
