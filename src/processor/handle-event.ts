// One event, from the inbox to a final state or a later attempt: taken in (parked at once when it is not an
// event), checked against the newest snapshot applied (an older one is discarded), applied through the
// EmrPort and marked applied together with its versions and mapping claims, or, when that fails, handled by
// the retry decision: wait out an EMR incident, retry later, or park it as a dead letter with one alert.
import type { Counter } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { WebhookEvent } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import { createMappingStore } from '../mappings/store.ts';
import type { IncidentGate } from '../work/incident-gate.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { applyEvent, type Applied, type ApplyDeps, type DocumentEventSink } from './apply.ts';
import { createEntityLocks } from './entity-locks.ts';
import { parseStoredEvent } from './parse.ts';
import type { ClaimedEvent, Queue } from './queue.ts';
import { createEntityVersions } from './versions.ts';

/** The processor's counters: alerts by kind (event, mapping) and events that reached a final state, by state. */
export interface ProcessorCounters {
  alerts: Counter<'kind'>;
  outcomes: Counter<'state'>;
}

export interface EventHandlingDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  queue: Queue;
  emr: EmrPort;
  documentEvents: DocumentEventSink;
  /** Decides what a failed attempt leads to (incidents are waited out behind `emrGate`). */
  retry: RetryPolicy;
  emrGate: IncidentGate;
  counters: ProcessorCounters;
}

export interface EventHandling {
  /** Takes in inbox rows stored since the last call; parks those that are not events. Returns how many it parked. */
  intake(): number;
  /** Handles one claimed event; true when it reached a final state. */
  handleClaimed(c: ClaimedEvent): Promise<boolean>;
}

/** Applying an event through the EmrPort and marking it applied, over the entity versions and mappings. */
interface Applier {
  /** The newest snapshot applied of the event's entity, when the event is older than it. */
  newerSnapshot(event: WebhookEvent, entityKey: string): string | undefined;
  /** Applies the event, then marks it applied with its versions and mapping claims in one transaction. */
  applyAndMark(inboxId: number, event: WebhookEvent, entityKey: string): Promise<Applied>;
}

function createApplier(deps: Pick<EventHandlingDeps, 'db' | 'clock' | 'queue' | 'emr' | 'documentEvents'>): Applier {
  const { db, queue } = deps;
  const mappings = createMappingStore(db, deps.clock);
  const versions = createEntityVersions(db);
  const applyDeps: ApplyDeps = { emr: deps.emr, mappings, documentEvents: deps.documentEvents, locks: createEntityLocks(), versions };
  const markApplied = db.transaction((inboxId: number, entityKey: string, event: WebhookEvent, applied: Applied) => {
    versions.write(entityKey, { occurredAt: event.occurredAt, hash: null }, event.eventId);
    for (const v of applied.versions) versions.write(v.entityKey, v.version, event.eventId);
    for (const c of applied.claims) mappings.enqueue(c.entityType, c.serviceId, c.emrId);
    queue.finish(inboxId, 'applied');
  });
  return {
    newerSnapshot(event, entityKey) {
      const newest = versions.newest(entityKey)?.occurredAt;
      return newest !== undefined && event.occurredAt < newest ? newest : undefined;
    },
    async applyAndMark(inboxId, event, entityKey) {
      const applied = await applyEvent(applyDeps, event);
      markApplied(inboxId, entityKey, event, applied);
      for (const v of applied.versions) versions.settle(v.entityKey, v.version);
      return applied;
    },
  };
}

/** Where events end when they do not apply: dead letters (one alert each), or a later attempt. */
interface Parking {
  deadLetter(eventId: string, inboxId: number | undefined, reason: string): void;
  /** Records what the failed attempt leads to; true when the event reached a final state (a dead letter). */
  afterFailure(c: ClaimedEvent, event: WebhookEvent, err: unknown, log: Logger): boolean;
}

function createParking(deps: Pick<EventHandlingDeps, 'logger' | 'queue' | 'retry' | 'counters'>): Parking {
  const { logger, queue, counters } = deps;
  function deadLetter(eventId: string, inboxId: number | undefined, reason: string): void {
    if (inboxId !== undefined) queue.finish(inboxId, 'dead', reason);
    counters.alerts.inc({ kind: 'event' });
    counters.outcomes.inc({ state: 'dead' });
    logger.error({ alert: true, eventId, reason: reason.split(':')[0] }, 'event parked as a dead letter');
  }
  return {
    deadLetter,
    afterFailure(c, event, err, log) {
      const decision = deps.retry.decide(err, c.attempts);
      const { reason, code } = decision.failure;
      switch (decision.kind) {
        case 'incident-wait':
          // The EMR refuses the adapter itself: the event waits for the fix, its budget untouched. The
          // incident's alert is the dependency status's, once, not one per event.
          queue.waitLater(c.inboxId, decision.at, reason);
          log.debug({ eventType: event.eventType, code }, 'event waits for an EMR incident to end');
          return false;
        case 'retry-at':
          queue.retryLater(c.inboxId, decision.at, reason);
          log.warn({ eventType: event.eventType, code }, 'event failed; will retry');
          return false;
        case 'give-up':
          deadLetter(c.eventId, c.inboxId, reason);
          return true;
      }
    },
  };
}

export function createEventHandling(deps: EventHandlingDeps): EventHandling {
  const { logger, queue, counters } = deps;
  const applier = createApplier(deps);
  const parking = createParking(deps);

  /** Discards the event when a newer snapshot of its entity was applied; true when it did. */
  function discardIfStale(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: Logger): boolean {
    const newest = applier.newerSnapshot(event, entityKey);
    if (newest === undefined) return false;
    queue.finish(c.inboxId, 'discarded_stale', `stale: occurredAt ${event.occurredAt} is older than ${newest}`);
    counters.outcomes.inc({ state: 'discarded_stale' });
    log.info({ eventType: event.eventType }, 'stale snapshot discarded');
    return true;
  }

  async function apply(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: Logger): Promise<void> {
    const applied = await applier.applyAndMark(c.inboxId, event, entityKey);
    deps.emrGate.passed();
    counters.outcomes.inc({ state: 'applied' });
    log.debug({ eventType: event.eventType, claims: applied.claims.length }, 'event applied');
  }

  return {
    intake() {
      const { dead } = queue.intake();
      for (const d of dead) parking.deadLetter(d.eventId, undefined, d.reason);
      return dead.length;
    },
    async handleClaimed(c) {
      const log = logger.child({ eventId: c.eventId, attempt: c.attempts });
      const parsed = parseStoredEvent(c.body, c.eventId);
      if (!parsed.ok) {
        parking.deadLetter(c.eventId, c.inboxId, parsed.reason);
        return true;
      }
      const { event, entityKey } = parsed;
      if (discardIfStale(c, event, entityKey, log)) return true;
      try {
        await apply(c, event, entityKey, log);
        return true;
      } catch (err) {
        return parking.afterFailure(c, event, err, log);
      }
    },
  };
}
