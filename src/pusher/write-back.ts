// Each new status of a document from the EMR goes back to the EMR (recordDocumentOutcome), with the link of
// its patient where the service made one; repeated until it succeeds. While the EMR refuses the adapter (an
// incident, behind the shared gate) nothing is written back. The rows a pass wrote back are marked synced
// together at its end, in one transaction; a crash before that writes them back again, which the EMR takes
// as the same outcome (recordDocumentOutcome is idempotent). Each write-back is a span, the child of the
// document's filing (its trace context is stored with the row).
import type { EmrPort } from '../emr/port.ts';
import { describeError, isIncident } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DocumentStore, OutboxRow } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import type { IncidentGate } from '../work/incident-gate.ts';
import { inSpan, SPAN_NAMES, type SpanScope } from '../tracing/spans.ts';

export interface WriteBack {
  /** Writes back the statuses not yet in the EMR (at most `batch`), oldest first; stops at an EMR incident. Returns how many reached the EMR. */
  syncDue(batch: number): Promise<number>;
}

export function createWriteBack(deps: {
  logger: Logger;
  outbox: Pick<DocumentStore, 'unsynced' | 'markAllSynced'>;
  mappings: Pick<MappingStore, 'link'>;
  emr: EmrPort;
  emrGate: IncidentGate;
}): WriteBack {
  const { logger, outbox, emrGate } = deps;

  /** Writes a row's status back to the EMR (adding it to `synced` once there); false when an EMR incident means the rest should wait too. */
  async function syncOne(row: OutboxRow, synced: OutboxRow[]): Promise<boolean> {
    if (!row.emr_document_id || row.state === 'queued') {
      synced.push(row);
      return true;
    }
    const attributes = {
      'emr_bridge.document.external_id': row.external_id,
      'emr_bridge.document.type': row.document_type,
      'emr_bridge.document.status': row.state,
      'emr_bridge.document.emr_id': row.emr_document_id,
    };
    const outcome = { documentId: row.emr_document_id, status: row.state };
    return inSpan(SPAN_NAMES.documentWriteBack, attributes, (span) => writeBack(span, row, outcome, synced), { parent: row.trace_context });
  }

  async function writeBack(
    span: SpanScope,
    row: OutboxRow,
    { documentId, status }: { documentId: string; status: Exclude<OutboxRow['state'], 'queued'> },
    synced: OutboxRow[],
  ): Promise<boolean> {
    try {
      // Repeated until it succeeds, with the outcome: the EMR record carries the service's id only where
      // this link is the mapping that stands (never two records with one id).
      if (row.emr_patient_id && row.patient_service_id && (await deps.mappings.link('patient', row.patient_service_id, row.emr_patient_id)))
        await deps.emr.linkPatient(row.emr_patient_id, row.patient_service_id);
      await deps.emr.recordDocumentOutcome({
        documentId,
        documentType: row.document_type,
        status,
        ...(row.status_reason ? { statusReason: row.status_reason } : {}),
        ...(row.service_id ? { serviceId: row.service_id } : {}),
        ...(row.release_after ? { releaseAfter: row.release_after } : {}),
        ...(row.sent_at ? { sentAt: row.sent_at } : {}),
        occurredAt: new Date(row.updated_at).toISOString(),
      });
      synced.push(row);
      emrGate.passed();
      return true;
    } catch (err) {
      span.fail(err);
      if (isIncident(err)) {
        emrGate.failed();
        return false;
      }
      logger.warn({ externalId: row.external_id, code: describeError(err).code }, 'status write-back to the EMR failed; will retry');
      return true;
    }
  }

  return {
    async syncDue(batch) {
      const synced: OutboxRow[] = [];
      try {
        for (const row of emrGate.closed() ? [] : await outbox.unsynced(batch)) if (!(await syncOne(row, synced))) break;
      } finally {
        await outbox.markAllSynced(synced);
      }
      return synced.length;
    },
  };
}
