// The durable mapping outbox: posts each new mapping back to the service until it succeeds. A failure that
// can pass is retried with backoff, without limit, and never sooner than the service's Retry-After (the rule
// document sends follow); a 409 mapping_conflict (or any other permanent refusal) parks the mapping as dead
// with one alert. Its rows are the store's (src/storage/mapping-outbox.ts). Its pass, of the shared worker shape
// (src/work/worker.ts), runs in a worker the processor starts beside its own and wakes as events are applied; a
// pass posts up to `concurrency` mappings at once (SERVICE_MAX_CONCURRENCY). Each post is a span,
// the child of the processing that claimed the mapping (its trace context is stored with the row).
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { MappingOutboxStore, QueuedMapping } from '../storage/mapping-outbox.ts';
import { inSpan, SPAN_NAMES, type SpanScope } from '../tracing/spans.ts';
import type { BackoffSettings } from '../work/backoff.ts';
import { retryAfterOf } from '../work/retry-after.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import type { PassResult } from '../work/worker.ts';

/** Mappings claimed per pass, for each post in flight: a pass's marks cost one commit, so a few rounds of posts share it. */
const ROUNDS_PER_PASS = 4;

export interface MappingOutbox {
  /**
   * Posts what is due now, up to a few rounds of `concurrency` posts; returns how many reached a final state (`done`), and whether the
   * batch was full and some of it delivered (`more` may be due: the processor's round then passes again at once).
   */
  pass(): Promise<PassResult>;
  pending(): Promise<number>;
}

export interface MappingOutboxDeps {
  store: MappingOutboxStore;
  /** How long a mapping handed to this replica is not handed to another (PostgreSQL), while it is posted. */
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  serviceClient: Pick<ServiceClient, 'putMapping'>;
  /** Posts in flight at once (SERVICE_MAX_CONCURRENCY). */
  concurrency: number;
  backoff: BackoffSettings;
  random: () => number;
  onAlert: () => void;
}

export function createMappingOutbox(deps: MappingOutboxDeps): MappingOutbox {
  const { store, clock, logger } = deps;
  // The service may be down for long: a mapping is never given up for that, only when refused.
  const retryPolicy = createRetryPolicy({ clock, budget: { maxAttempts: Infinity, backoff: deps.backoff }, random: deps.random });

  /**
   * Posts one mapping and records the outcome; true when it reached a final state. A delivered mapping's mark is
   * queued in `sent`, written with the pass's others in one commit: posting one again after a crash is harmless
   * (the same mapping again answers 200), a commit per mapping was most of the processor's fsyncs.
   */
  function post(r: QueuedMapping, sent: QueuedMapping[]): Promise<boolean> {
    const attributes = { 'emr_bridge.entity.type': r.entityType, 'emr_bridge.service_id': r.serviceId, 'emr_bridge.emr.id': r.externalId };
    return inSpan(SPAN_NAMES.mappingPost, attributes, (span) => postIn(span, r, sent), { parent: r.traceContext ?? null });
  }

  async function postIn(span: SpanScope, r: QueuedMapping, sent: QueuedMapping[]): Promise<boolean> {
    // Made only when something is logged: a child logger is not free, and a post that succeeds logs at debug only.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ entityType: r.entityType, serviceId: r.serviceId, attempt: r.attempts + 1 }));
    try {
      await deps.serviceClient.putMapping(r.entityType, r.serviceId, r.externalId);
      sent.push(r);
      if (logger.isLevelEnabled('debug')) log().debug('mapping posted');
      return true;
    } catch (err) {
      span.fail(err);
      const decision = retryPolicy.decide(err, r.attempts + 1, retryAfterOf(err));
      const { reason, code } = decision.failure;
      if (decision.kind === 'retry-at' || decision.kind === 'asked-to-wait') {
        await store.retryAt(r, decision.at, reason);
        log().warn({ code }, 'mapping post failed; will retry');
        return false;
      }
      await store.markDead(r, reason);
      deps.onAlert();
      log().error({ alert: true, code }, 'mapping refused by the service; parked as a dead letter');
      return true;
    }
  }

  return {
    pending: () => store.pending(),
    async pass() {
      const limit = deps.concurrency * ROUNDS_PER_PASS;
      const rows = await store.claimDue(limit, deps.leaseMs);
      const sent: QueuedMapping[] = [];
      let next = 0;
      let done = 0;
      const poster = async () => {
        while (next < rows.length) if (await post(rows[next++]!, sent)) done++;
      };
      await Promise.all(Array.from({ length: Math.min(deps.concurrency, rows.length) }, poster));
      await store.markSent(sent);
      // A full batch may leave more due; but while the service refuses or fails them, the next try waits for the
      // poll (and each mapping's backoff) rather than rushing every pending mapping at a service in trouble.
      return { done, more: rows.length === limit && sent.length > 0 };
    },
  };
}
