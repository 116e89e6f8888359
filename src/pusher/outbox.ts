// What the pusher shows of an outbox row and of its history. The rows themselves, and every change to them, are
// the document store's (src/storage/documents.ts).
import { toIso } from '../clock.ts';
import type { DocumentHistoryEntry, OutboxRow } from '../storage/documents.ts';

/**
 * What an admin or the CLI may see of a row: identifiers, status, reasons, times, and the size and SHA-256 of
 * its file (kept once the request is gone). Never the request.
 */
export function publicView(r: OutboxRow) {
  return {
    externalId: r.external_id,
    documentType: r.document_type,
    source: r.source,
    status: r.state,
    ...(r.status_reason ? { statusReason: r.status_reason } : {}),
    ...(r.error_code ? { errorCode: r.error_code } : {}),
    ...(r.service_id ? { serviceId: r.service_id } : {}),
    ...(r.release_after ? { releaseAfter: r.release_after } : {}),
    ...(r.sent_at ? { sentAt: r.sent_at } : {}),
    attempts: r.attempts,
    emrDocumentId: r.emr_document_id,
    ...(r.document_size != null ? { documentSize: r.document_size } : {}),
    ...(r.document_sha256 != null ? { documentSha256: r.document_sha256 } : {}),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

/** One step of a document's history: when, the status, the send attempt and the error code or reason when there is one. */
export const historyStepView = (h: DocumentHistoryEntry) => ({
  at: toIso(h.at),
  status: h.status,
  ...(h.attempt !== null ? { attempt: h.attempt } : {}),
  ...(h.detail !== null ? { detail: h.detail } : {}),
});
