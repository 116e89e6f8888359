// Sending queued documents to the service: up to `concurrency` sends in flight, each claimed with the shared
// lease. An answer records the document's status (and first links a patient the service made for it to the
// EMR patient); a failure goes through the shared retry rule, Retry-After honoured: sent again later, or
// FAILED here (retries_exhausted, or the service's refusal code).
import type { Clock } from '../clock.ts';
import type { DocumentRequest } from '../contract/documents.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { ServiceCallError } from '../service-client/errors.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { nextHeldPoll } from './held.ts';
import type { Outbox, OutboxRow } from './outbox.ts';
import type { PatientLinks } from './patient-links.ts';

export interface SenderDeps {
  clock: Clock;
  logger: Logger;
  outbox: Outbox;
  links: PatientLinks;
  serviceClient: Pick<ServiceClient, 'postDocument'>;
  retry: RetryPolicy;
  settings: { leaseMs: number; concurrency: number; heldPollMs: number };
  /** True once the pusher is stopping: no new send starts. */
  stopping: () => boolean;
}

export interface Sender {
  /** Keeps up to `concurrency` sends in flight, claiming more as each one finishes, until nothing is due. Returns how many it started. */
  sendDue(): Promise<number>;
}

export function createSender(deps: SenderDeps): Sender {
  const { clock, logger, outbox, settings } = deps;

  async function send(row: OutboxRow): Promise<void> {
    const log = logger.child({ externalId: row.external_id, documentType: row.document_type, attempt: row.attempts });
    try {
      const { resource, replayed } = await deps.serviceClient.postDocument(row.document_type, JSON.parse(row.request!) as DocumentRequest);
      // Linked before anything else. The service's patient.created for a patient it made for this document
      // carries the EMR id we sent (patientExternalId), so the processor finds the EMR record in either
      // order; if it came first it has recorded this same link, which stands. A service patient mapped to
      // another EMR record is one the service matched by phone to someone else (a family member), or a
      // duplicate from a service that ignored patientExternalId: either way, a person should look.
      if (row.emr_patient_id && resource.patientServiceId && !deps.links.link(resource.patientServiceId, row.emr_patient_id))
        log.warn(
          { alert: true, patientServiceId: resource.patientServiceId, emrPatientId: row.emr_patient_id },
          'the service put this document with a patient the EMR holds as another record',
        );
      const nextPoll = resource.status === 'HELD' ? { nextPollAt: nextHeldPoll(clock.now(), settings.heldPollMs, resource.releaseAfter) } : {};
      outbox.recordOutcome(row.external_id, { state: resource.status, resource, ...nextPoll });
      log.info({ status: resource.status, replayed }, 'document sent to the service');
    } catch (err) {
      afterFailure(row, err, log);
    }
  }

  function afterFailure(row: OutboxRow, err: unknown, log: Logger): void {
    const retryAfterMs = err instanceof ServiceCallError ? (err.retryAfterMs ?? 0) : 0;
    const decision = deps.retry.decide(err, row.attempts, retryAfterMs);
    const { code, type, message } = decision.failure;
    if (decision.kind === 'give-up') {
      const finalCode = decision.exhausted ? 'retries_exhausted' : (code ?? 'rejected');
      outbox.recordOutcome(row.external_id, { state: 'FAILED', code: finalCode, reason: message });
      log.error({ alert: true, code: finalCode }, 'document could not be sent');
      return;
    }
    outbox.retryAt(row.external_id, decision.at, code ?? type, message);
    log.warn({ code }, 'document send failed; will retry');
  }

  return {
    async sendDue() {
      const inFlight = new Set<Promise<void>>();
      let started = 0;
      for (;;) {
        if (!deps.stopping() && inFlight.size < settings.concurrency) {
          for (const row of outbox.claimDue(settings.concurrency - inFlight.size, settings.leaseMs)) {
            const p: Promise<void> = send(row).finally(() => inFlight.delete(p));
            inFlight.add(p);
            started++;
          }
        }
        if (inFlight.size === 0) return started;
        await Promise.race(inFlight);
      }
    },
  };
}
