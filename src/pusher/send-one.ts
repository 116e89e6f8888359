// Sending one claimed document to the service, and what became of it: the status the service answered (its
// patient first linked to the EMR patient), or a failure through the shared retry rule, Retry-After honoured:
// sent again later, or FAILED here (retries_exhausted, or the service's refusal code). Nothing is recorded
// here: the send path (./send.ts) records what ended, many sends to a commit, and logs each once recorded. Each
// send is a span, the child of the document's filing (its trace context is stored with the row).
import { DataKeyMissingError } from '../sealing/errors.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { ClaimedRow, DocumentStore, SendEnd } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import { retryAfterOf } from '../work/retry-after.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { bindToSpan, inSpan, SPAN_NAMES, type SpanScope } from '../tracing/spans.ts';
import { nextHeldPoll } from './held.ts';

/** A send that ended: what to record, and what to log once it is recorded. */
export interface Ended {
  end: SendEnd;
  logged: () => void;
}

export interface SendOneDeps {
  clock: Clock;
  logger: Logger;
  outbox: Pick<DocumentStore, 'requestOf'>;
  mappings: Pick<MappingStore, 'link'>;
  serviceClient: Pick<ServiceClient, 'postDocument'>;
  retry: RetryPolicy;
  heldPollMs: number;
}

/** Sends one claimed row; never throws for the service's failures (they are an Ended too). */
export function createSendOne(deps: SendOneDeps): (row: ClaimedRow) => Promise<Ended> {
  const { clock, logger } = deps;

  function send(row: ClaimedRow): Promise<Ended> {
    const attributes = {
      'emr_bridge.document.external_id': row.external_id,
      'emr_bridge.document.type': row.document_type,
      'emr_bridge.document.attempt': row.attempts,
    };
    return inSpan(
      SPAN_NAMES.documentSend,
      attributes,
      async (span) => {
        const ended = await sendIn(span, row);
        // Logged once recorded, after the span: still with its ids.
        return { end: ended.end, logged: bindToSpan(ended.logged) };
      },
      { parent: row.trace_context },
    );
  }

  async function sendIn(span: SpanScope, row: ClaimedRow): Promise<Ended> {
    const log = logger.child({ externalId: row.external_id, documentType: row.document_type, attempt: row.attempts });
    try {
      const request = await deps.outbox.requestOf(row.external_id);
      // No request kept: the row became final meanwhile (a document event); there is nothing to send.
      if (!request) return { end: { externalId: row.external_id, leaseUntil: row.lease_until!, unsent: true }, logged: () => undefined };
      const { resource, replayed } = await deps.serviceClient.postDocument(row.document_type, request);
      // Linked before anything else. The service's patient.created for a patient it made for this document
      // carries the EMR id we sent (patientExternalId), so the processor finds the EMR record in either
      // order; if it came first it has recorded this same link, which stands. A service patient mapped to
      // another EMR record is one the service matched by phone to someone else (a family member), or a
      // duplicate from a service that ignored patientExternalId: either way, a person should look.
      if (row.emr_patient_id && resource.patientServiceId && !(await deps.mappings.link('patient', resource.patientServiceId, row.emr_patient_id)))
        log.warn(
          { alert: true, patientServiceId: resource.patientServiceId, emrPatientId: row.emr_patient_id },
          'the service put this document with a patient the EMR holds as another record',
        );
      span.set({ 'emr_bridge.document.status': resource.status });
      const nextPoll = resource.status === 'HELD' ? { nextPollAt: nextHeldPoll(clock.now(), deps.heldPollMs, resource.releaseAfter) } : {};
      return {
        end: { externalId: row.external_id, outcome: { state: resource.status, resource, ...nextPoll } },
        logged: () => log.info({ status: resource.status, replayed }, 'document sent to the service'),
      };
    } catch (err) {
      span.fail(err);
      const ended = afterFailure(row, err, log);
      if ('outcome' in ended.end) span.set({ 'emr_bridge.document.status': ended.end.outcome.state });
      return ended;
    }
  }

  function afterFailure(row: ClaimedRow, err: unknown, log: Logger): Ended {
    const decision = deps.retry.decide(err, row.attempts, retryAfterOf(err));
    const { code, type, message } = decision.failure;
    if (decision.kind === 'give-up') {
      const finalCode = decision.exhausted ? 'retries_exhausted' : (code ?? 'rejected');
      return {
        end: { externalId: row.external_id, outcome: { state: 'FAILED', code: finalCode, reason: message } },
        // A request that does not open names its key id (an identifier), so the operator knows which key to bring back.
        logged: () =>
          log.error({ alert: true, code: finalCode, ...(err instanceof DataKeyMissingError ? { kid: err.kid } : {}) }, 'document could not be sent'),
      };
    }
    return {
      end: { externalId: row.external_id, leaseUntil: row.lease_until!, retry: { at: decision.at, code: code ?? type, reason: message } },
      logged: () => log.warn({ code }, 'document send failed; will retry'),
    };
  }

  return send;
}
