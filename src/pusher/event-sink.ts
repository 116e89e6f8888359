// document.delivered and document.failed, as the processor receives them: the outbox row of that
// externalId takes the new status at once (no need to wait for the next poll), and the EMR hears of it.
import type { Clock } from '../clock.ts';
import type { DocumentEvent } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import { createOutbox, isFinal } from './outbox.ts';

export function createDocumentEventSink(deps: { db: Db; clock: Clock; logger: Logger; emr: EmrPort }) {
  const outbox = createOutbox(deps.db, deps.clock);
  const unmatched = deps.db.prepare(
    'INSERT INTO unmatched_document_events (event_id, external_id, status, occurred_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return {
    async apply(event: DocumentEvent): Promise<void> {
      const d = event.document;
      const row = outbox.get(d.externalId);
      if (!row) {
        unmatched.run(event.eventId, d.externalId, d.status, event.occurredAt);
        deps.logger.warn({ eventId: event.eventId, externalId: d.externalId }, 'document event for a document this adapter did not send');
        return;
      }
      // A late or repeated event changes nothing once the service has settled the document. A row that
      // failed only here (its answers timed out) takes the event: the service did get the document.
      if (isFinal(row)) return;
      outbox.recordOutcome(d.externalId, {
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
      deps.logger.info({ eventId: event.eventId, externalId: d.externalId, status: d.status }, 'document status from event');
    },
  };
}
