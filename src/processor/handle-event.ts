// One event, from the inbox to a final state or a later attempt: taken in (parked at once when it is not an
// event), checked against the newest snapshot applied (an older one is discarded), applied through the
// EmrPort and marked applied together with its versions and mapping claims, or, when that fails, handled by
// the retry decision: wait out an EMR incident, retry later, or park it as a dead letter with one alert.
// What an event leads to is written with the rest of its batch (write-batch.ts): counters and logs follow
// once that is on disk.
import type { Counter } from 'prom-client';
import type { AppointmentEvent, WebhookEvent } from '../contract/events.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import type { ProcessorStores } from '../storage/processor-stores.ts';
import type { ClaimedEvent, TakenEvent, VersionWrite } from '../storage/processing.ts';
import type { IncidentGate } from '../work/incident-gate.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { retryAfterOf } from '../work/retry-after.ts';
import { inSpan, SPAN_NAMES, type SpanScope, storedContext } from '../tracing/spans.ts';
import { type Applied, type ApplyDeps, applyEvent, type DocumentEventSink } from './apply.ts';
import { patientKey } from './apply-records.ts';
import { RecordsUnmapped } from './resolve.ts';
import type { Parsed, ParsedEvent } from '../contract/stored-event.ts';
import type { OutcomeBatch } from './write-batch.ts';

/** The processor's counters: alerts by kind (event, mapping) and events that reached a final state, by state. */
export interface ProcessorCounters {
  alerts: Counter<'kind'>;
  outcomes: Counter<'state'>;
}

export interface EventHandlingDeps {
  logger: Logger;
  stores: Pick<ProcessorStores, 'queue' | 'versions' | 'mappings' | 'locks' | 'crosswalk'>;
  emr: EmrPort;
  documentEvents: DocumentEventSink;
  /** Decides what a failed attempt leads to (incidents are waited out behind `emrGate`). */
  retry: RetryPolicy;
  emrGate: IncidentGate;
  counters: ProcessorCounters;
  /** An applied event's mapping claims are committed (queued in the mapping outbox). */
  onMappingsQueued?: () => void;
}

export interface EventHandling {
  /**
   * Takes in up to `limit` inbox rows stored since the last call; parks those that are not events. Returns how
   * many it took and parked, and whether it took a full `limit` (so more may be waiting).
   */
  intake(limit: number): Promise<{ taken: number; parked: number; full: boolean }>;
  /**
   * The lock keys handling the event takes, as far as this process knows it (validated here at intake): its
   * entity, and the patient an appointment event names. An event taken in elsewhere: its entity only.
   */
  keysOf(c: ClaimedEvent): string[];
  /** Handles one claimed event, its outcome added to `batch`; true when that outcome is a final state. */
  handleClaimed(c: ClaimedEvent, batch: OutcomeBatch): Promise<boolean>;
  /** Hands a claimed event back untried, with `batch` (the batch ends early: stop(), or an EMR incident). */
  release(c: ClaimedEvent, batch: OutcomeBatch): void;
}

/** Applying an event through the EmrPort and marking it applied, over the entity versions and mappings. */
interface Applier {
  /** The newest snapshot applied of the event's entity, when the event is older than it. */
  newerSnapshot(event: WebhookEvent, entityKey: string): Promise<string | undefined>;
  /** Applies the event, then adds to `batch` its applied mark with its versions and mapping claims. */
  applyAndMark(inboxId: number, event: WebhookEvent, entityKey: string, batch: OutcomeBatch, committed: (applied: Applied) => void): Promise<void>;
}

function createApplier(deps: Pick<EventHandlingDeps, 'stores' | 'emr' | 'documentEvents'>): Applier {
  const { versions } = deps.stores;
  const applyDeps: ApplyDeps = {
    emr: deps.emr,
    mappings: deps.stores.mappings,
    crosswalk: deps.stores.crosswalk,
    documentEvents: deps.documentEvents,
    locks: deps.stores.locks,
    versions,
  };
  return {
    async newerSnapshot(event, entityKey) {
      const newest = (await versions.newest(entityKey))?.occurredAt;
      return newest !== undefined && event.occurredAt < newest ? newest : undefined;
    },
    async applyAndMark(inboxId, event, entityKey, batch, committed) {
      const applied = await applyEvent(applyDeps, event);
      // The event's own entity, then the snapshots it applied besides (noted while applying).
      const written: VersionWrite[] = [{ entityKey, version: { occurredAt: event.occurredAt, hash: null }, eventId: event.eventId }];
      for (const v of applied.versions) written.push({ entityKey: v.entityKey, version: v.version, eventId: event.eventId, noted: true });
      // The processing's trace context goes with the mapping claims: each mapping's post joins this trace.
      const traceContext = storedContext();
      batch.add({ kind: 'applied', inboxId, versions: written, claims: applied.claims, emrRefs: applied.refs, traceContext }, () => committed(applied));
    },
  };
}

/** Where events end when they do not apply: dead letters (one alert each), or a later attempt. */
interface Parking {
  /** Counts and logs a dead letter (once it is recorded). */
  alert(eventId: string, reason: string): void;
  deadLetter(c: ClaimedEvent, reason: string, batch: OutcomeBatch): void;
  /** Adds to `batch` what the failed attempt leads to: waiting out an incident, a retry, or a dead letter (a final state). */
  afterFailure(c: ClaimedEvent, event: WebhookEvent, err: unknown, log: () => Logger, batch: OutcomeBatch): 'wait' | 'retry' | 'dead';
}

function createParking(deps: Pick<EventHandlingDeps, 'logger' | 'retry' | 'counters'>): Parking {
  const { logger, counters } = deps;
  function alert(eventId: string, reason: string): void {
    counters.alerts.inc({ kind: 'event' });
    counters.outcomes.inc({ state: 'dead' });
    logger.error({ alert: true, eventId, reason: reason.split(':')[0] }, 'event parked as a dead letter');
  }
  function deadLetter(c: ClaimedEvent, reason: string, batch: OutcomeBatch): void {
    batch.add({ kind: 'dead', inboxId: c.inboxId, reason }, () => alert(c.eventId, reason));
  }
  return {
    alert,
    deadLetter,
    afterFailure(c, event, err, log, batch) {
      const decision = deps.retry.decide(err, c.attempts, retryAfterOf(err));
      const { reason, code } = decision.failure;
      switch (decision.kind) {
        case 'incident-wait':
          // The EMR refuses the adapter itself: the event waits for the fix, its budget untouched. The
          // incident's alert is the dependency status's, once, not one per event.
          batch.add({ kind: 'wait', inboxId: c.inboxId, at: decision.at, reason }, () =>
            log().debug({ eventType: event.eventType, code }, 'event waits for an EMR incident to end'),
          );
          return 'wait';
        case 'asked-to-wait':
          // The EMR asked for time: the event goes back until then, its slot to another, its attempt not counted.
          batch.add({ kind: 'wait', inboxId: c.inboxId, at: decision.at, reason }, () =>
            log().debug({ eventType: event.eventType, code }, 'the EMR pushed back; event waits the time it asked for'),
          );
          return 'wait';
        case 'retry-at':
          batch.add({ kind: 'retry', inboxId: c.inboxId, at: decision.at, reason }, () =>
            log().warn({ eventType: event.eventType, code }, 'event failed; will retry'),
          );
          return 'retry';
        case 'give-up':
          deadLetter(c, reason, batch);
          return 'dead';
      }
    },
  };
}

/** Events validated at intake and not yet claimed, kept at most this many (past it, the oldest kept are forgotten). */
const TAKEN_MAX = 5_000;

/**
 * The validated event of a claimed row: the one intake validated, else its stored body parsed again (another
 * process took it in: a restart, or another replica). Bounded, since another replica may claim what this one
 * took in: the oldest kept go first.
 */
function createClaimedEvents(queue: ProcessorStores['queue']): {
  keep(events: TakenEvent[]): void;
  peek(inboxId: number): ParsedEvent | undefined;
  take(c: ClaimedEvent): Promise<Parsed>;
} {
  const taken = new Map<number, ParsedEvent>();
  return {
    keep(events) {
      for (const e of events) {
        if (taken.size >= TAKEN_MAX) taken.delete(taken.keys().next().value as number);
        taken.set(e.inboxId, { event: e.event, entityKey: e.entityKey });
      }
    },
    peek: (inboxId) => taken.get(inboxId),
    async take(c) {
      const kept = taken.get(c.inboxId);
      if (kept === undefined) return queue.event(c.inboxId);
      taken.delete(c.inboxId);
      return { ok: true, ...kept };
    },
  };
}

export function createEventHandling(deps: EventHandlingDeps): EventHandling {
  const { logger, counters } = deps;
  const { queue } = deps.stores;
  const applier = createApplier(deps);
  const parking = createParking(deps);
  const claimedEvents = createClaimedEvents(queue);

  /** Discards the event when a newer snapshot of its entity was applied; true when it did. */
  async function discardIfStale(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: () => Logger, batch: OutcomeBatch): Promise<boolean> {
    const newest = await applier.newerSnapshot(event, entityKey);
    if (newest === undefined) return false;
    batch.add({ kind: 'discarded_stale', inboxId: c.inboxId, reason: `stale: occurredAt ${event.occurredAt} is older than ${newest}` }, () => {
      counters.outcomes.inc({ state: 'discarded_stale' });
      log().info({ eventType: event.eventType }, 'stale snapshot discarded');
    });
    return true;
  }

  async function apply(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: () => Logger, batch: OutcomeBatch): Promise<void> {
    await applier.applyAndMark(c.inboxId, event, entityKey, batch, (applied) => {
      counters.outcomes.inc({ state: 'applied' });
      if (applied.claims.length > 0) deps.onMappingsQueued?.();
      if (logger.isLevelEnabled('debug')) log().debug({ eventType: event.eventType, claims: applied.claims.length }, 'event applied');
    });
    deps.emrGate.passed();
  }

  async function handle(c: ClaimedEvent, batch: OutcomeBatch, span: SpanScope): Promise<boolean> {
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ eventId: c.eventId, attempt: c.attempts }));
    const parsed = await claimedEvents.take(c);
    if (!parsed.ok) {
      span.set({ 'emr_bridge.event.outcome': 'dead', 'emr_bridge.error.code': parsed.reason.split(':')[0] });
      parking.deadLetter(c, parsed.reason, batch);
      return true;
    }
    const { event, entityKey } = parsed;
    // The entity's type is the event type's first word (appointment.created): its service id is enough.
    span.set({ 'emr_bridge.event.type': event.eventType, 'emr_bridge.service_id': entityKey.slice(entityKey.indexOf(':') + 1) });
    if (await discardIfStale(c, event, entityKey, log, batch)) {
      span.set({ 'emr_bridge.event.outcome': 'discarded_stale' });
      return true;
    }
    try {
      await apply(c, event, entityKey, log, batch);
      span.set({ 'emr_bridge.event.outcome': 'applied' });
      return true;
    } catch (err) {
      if (err instanceof RecordsUnmapped) {
        span.set({ 'emr_bridge.event.outcome': 'waiting' });
        batch.add({ kind: 'waiting', inboxId: c.inboxId, lacks: err.lacks, reason: err.message }, () =>
          log().info({ eventType: event.eventType, lacks: err.lacks }, 'event waits for a record to be mapped in the crosswalk'),
        );
        return false;
      }
      span.fail(err);
      const outcome = parking.afterFailure(c, event, err, log, batch);
      span.set({ 'emr_bridge.event.outcome': outcome });
      return outcome === 'dead';
    }
  }

  return {
    async intake(limit) {
      const { taken, events, dead } = await queue.intake(limit);
      claimedEvents.keep(events);
      for (const d of dead) parking.alert(d.eventId, d.reason);
      return { taken, parked: dead.length, full: taken >= limit };
    },
    keysOf(c) {
      const kept = claimedEvents.peek(c.inboxId);
      // An appointment's event applies its patient's snapshot too, in that patient's section (apply.ts).
      if (!kept?.entityKey.startsWith('appointment:')) return [c.entityKey];
      return [c.entityKey, patientKey((kept.event as AppointmentEvent).patient.serviceId)];
    },
    handleClaimed(c, batch) {
      // A span of its own, the child of the receipt's (stored with the inbox row), wherever and whenever it runs.
      return inSpan(SPAN_NAMES.processEvent, { 'emr_bridge.event.id': c.eventId, 'emr_bridge.event.attempt': c.attempts }, (span) => handle(c, batch, span), {
        kind: 'consumer',
        parent: c.traceContext,
      });
    },
    release(c, batch) {
      batch.add({ kind: 'release', inboxId: c.inboxId });
    },
  };
}
