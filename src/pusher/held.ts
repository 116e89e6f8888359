// Documents the service HELD: asked about again just after releaseAfter (quiet hours) or on the
// PUSHER_HELD_POLL_SECONDS schedule (auto-send off), until they move on to another status. Each question is a
// span, the child of the document's filing (its trace context is stored with the row).
import type { Clock } from '../clock.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { DocumentStore, OutboxRow } from '../storage/documents.ts';
import { inSpan, SPAN_NAMES, type SpanScope } from '../tracing/spans.ts';

/** How long after releaseAfter a HELD document is asked about: the service has released it by then. */
const AFTER_RELEASE_MS = 1_000;
/** A poll that failed is tried again after the schedule, or this, whichever is sooner. */
const FAILED_POLL_RETRY_MAX_MS = 60_000;

/** When to ask about a HELD document: just after its release (quiet hours), or on the schedule (auto-send off). */
export function nextHeldPoll(now: number, heldPollMs: number, releaseAfter: string | undefined): number {
  return releaseAfter ? Math.max(now, Date.parse(releaseAfter)) + AFTER_RELEASE_MS : now + heldPollMs;
}

export interface HeldFollowUp {
  /** Asks about the HELD documents due (at most `batch`); returns how many it asked about. */
  followDue(batch: number): Promise<number>;
}

export function createHeldFollowUp(deps: {
  clock: Clock;
  logger: Logger;
  outbox: Pick<DocumentStore, 'heldDue' | 'pollAgainAt' | 'recordOutcome'>;
  serviceClient: Pick<ServiceClient, 'getDocument'>;
  heldPollMs: number;
}): HeldFollowUp {
  const { clock, logger, outbox, heldPollMs } = deps;

  function follow(row: OutboxRow): Promise<void> {
    const attributes = { 'emr_bridge.document.external_id': row.external_id, 'emr_bridge.document.type': row.document_type };
    return inSpan(SPAN_NAMES.documentFollowUp, attributes, (span) => followIn(span, row), { parent: row.trace_context });
  }

  async function followIn(span: SpanScope, row: OutboxRow): Promise<void> {
    try {
      const resource = await deps.serviceClient.getDocument(row.external_id);
      span.set({ 'emr_bridge.document.status': resource?.status ?? 'HELD' });
      if (resource && resource.status !== 'HELD') {
        await outbox.recordOutcome(row.external_id, { state: resource.status, resource });
        logger.info({ externalId: row.external_id, status: resource.status }, 'held document moved on');
        return;
      }
      const releaseAfter = resource?.releaseAfter && Date.parse(resource.releaseAfter) > clock.now() ? resource.releaseAfter : undefined;
      await outbox.pollAgainAt(row.external_id, nextHeldPoll(clock.now(), heldPollMs, releaseAfter));
    } catch (err) {
      span.fail(err);
      // Asked again soon (a store that cannot take even this fails the pass, which the loop logs).
      await outbox.pollAgainAt(row.external_id, clock.now() + Math.min(heldPollMs, FAILED_POLL_RETRY_MAX_MS));
      logger.warn({ externalId: row.external_id, code: describeError(err).code }, 'poll of a held document failed');
    }
  }

  return {
    async followDue(batch) {
      const held = await outbox.heldDue(batch);
      await Promise.all(held.map(follow));
      return held.length;
    },
  };
}
