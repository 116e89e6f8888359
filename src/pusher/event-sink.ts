// document.delivered and document.failed, as the processor receives them: the outbox row of that
// externalId takes the new status at once (no need to wait for the next poll), and the EMR hears of it
// (the pusher of any replica is woken to write it back).
import type { DocumentEvent } from '../contract/events.ts';
import type { Logger } from '../logger.ts';
import type { Coordination } from '../storage/coordination.ts';
import { type DocumentStore, isFinal } from '../storage/documents.ts';

export function createDocumentEventSink(deps: {
  documents: Pick<DocumentStore, 'get' | 'recordOutcome' | 'recordUnmatchedEvent'>;
  coordination: Pick<Coordination, 'notify'>;
  logger: Logger;
}) {
  const { documents } = deps;
  return {
    async apply(event: DocumentEvent): Promise<void> {
      const d = event.document;
      const row = await documents.get(d.externalId);
      if (!row) {
        await documents.recordUnmatchedEvent({ eventId: event.eventId, externalId: d.externalId, status: d.status, occurredAt: event.occurredAt });
        deps.logger.warn({ eventId: event.eventId, externalId: d.externalId }, 'document event for a document this adapter did not send');
        return;
      }
      // A late or repeated event changes nothing once the service has settled the document. A row that
      // failed only here (its answers timed out) takes the event: the service did get the document.
      if (isFinal(row)) return;
      await documents.recordOutcome(d.externalId, {
        state: d.status,
        ...(d.statusReason ? { reason: d.statusReason } : {}),
        resource: {
          type: 'document',
          action: 'found',
          documentType: d.documentType,
          externalId: d.externalId,
          serviceId: d.serviceId,
          patientServiceId: d.patientServiceId,
          status: d.status,
          ...(d.sentAt ? { sentAt: d.sentAt } : {}),
          ...(d.statusReason ? { statusReason: d.statusReason } : {}),
        },
      });
      // A document from the EMR now has a status to write back there.
      if (row.emr_document_id) deps.coordination.notify('documents');
      deps.logger.info({ eventId: event.eventId, externalId: d.externalId, status: d.status }, 'document status from event');
    },
  };
}
