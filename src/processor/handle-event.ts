// One event, from the inbox to a final state or a later attempt: taken in (parked at once when it is not an
// event), checked against the newest snapshot applied (an older one is discarded), applied through the
// EmrPort and marked applied together with its versions and mapping claims, or, when that fails, handled by
// the retry decision: wait out an EMR incident, retry later, or park it as a dead letter with one alert.
// What an event leads to is written with the rest of its batch (write-batch.ts): counters and logs follow
// once that is on disk.
import type { Counter } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { WebhookEvent } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import { createMappingStore } from '../mappings/store.ts';
import type { IncidentGate } from '../work/incident-gate.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { type Applied, type ApplyDeps, applyEvent, type DocumentEventSink } from './apply.ts';
import { createEntityLocks } from './entity-locks.ts';
import { createMappingRecords } from './mapping-records.ts';
import { parseStoredEvent, type Parsed, type ParsedEvent } from './parse.ts';
import type { ClaimedEvent, Queue, TakenEvent } from './queue.ts';
import { type AppliedVersion, createEntityVersions } from './versions.ts';
import type { WriteBatch } from './write-batch.ts';

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
  /** Handles one claimed event, its outcome written with `batch`; true when that outcome is a final state. */
  handleClaimed(c: ClaimedEvent, batch: WriteBatch): Promise<boolean>;
  /** Hands a claimed event back untried, with `batch` (the batch ends early: stop(), or an EMR incident). */
  release(c: ClaimedEvent, batch: WriteBatch): void;
}

/** Applying an event through the EmrPort and marking it applied, over the entity versions and mappings. */
interface Applier {
  /** The newest snapshot applied of the event's entity, when the event is older than it. */
  newerSnapshot(event: WebhookEvent, entityKey: string): string | undefined;
  /** Applies the event, then adds to `batch` its applied mark with its versions and mapping claims. */
  applyAndMark(inboxId: number, event: WebhookEvent, entityKey: string, batch: WriteBatch, committed: (applied: Applied) => void): Promise<void>;
}

/** A version an applied mark stored, and the one noted in memory for it (a patient snapshot). */
interface Written {
  entityKey: string;
  stored: AppliedVersion;
  noted?: AppliedVersion;
}

function createApplier(deps: Pick<EventHandlingDeps, 'db' | 'clock' | 'queue' | 'emr' | 'documentEvents'>): Applier {
  const { db, queue } = deps;
  const store = createMappingStore(db, deps.clock);
  const versions = createEntityVersions(db);
  const applyDeps: ApplyDeps = {
    emr: deps.emr,
    mappings: createMappingRecords(db, deps.clock, store),
    documentEvents: deps.documentEvents,
    locks: createEntityLocks(),
    versions,
  };
  /** Inside the batch's transaction. Returns the versions it stored, to settle once they are on disk. */
  function markApplied(inboxId: number, entityKey: string, event: WebhookEvent, applied: Applied): Written[] {
    const written: Written[] = [{ entityKey, stored: versions.write(entityKey, { occurredAt: event.occurredAt, hash: null }, event.eventId) }];
    for (const v of applied.versions) written.push({ entityKey: v.entityKey, stored: versions.write(v.entityKey, v.version, event.eventId), noted: v.version });
    for (const c of applied.claims) store.enqueue(c.entityType, c.serviceId, c.emrId);
    queue.finish(inboxId, 'applied');
    return written;
  }
  return {
    newerSnapshot(event, entityKey) {
      const newest = versions.newest(entityKey)?.occurredAt;
      return newest !== undefined && event.occurredAt < newest ? newest : undefined;
    },
    async applyAndMark(inboxId, event, entityKey, batch, committed) {
      const applied = await applyEvent(applyDeps, event);
      let written: Written[] = [];
      batch.add(
        () => {
          written = markApplied(inboxId, entityKey, event, applied);
        },
        () => {
          for (const w of written) versions.settle(w.entityKey, w.stored, w.noted);
          committed(applied);
        },
      );
    },
  };
}

/** Where events end when they do not apply: dead letters (one alert each), or a later attempt. */
interface Parking {
  /** Counts and logs a dead letter (once it is recorded). */
  alert(eventId: string, reason: string): void;
  deadLetter(c: ClaimedEvent, reason: string, batch: WriteBatch): void;
  /** Adds to `batch` what the failed attempt leads to; true when the event reaches a final state (a dead letter). */
  afterFailure(c: ClaimedEvent, event: WebhookEvent, err: unknown, log: () => Logger, batch: WriteBatch): boolean;
}

function createParking(deps: Pick<EventHandlingDeps, 'logger' | 'queue' | 'retry' | 'counters'>): Parking {
  const { logger, queue, counters } = deps;
  function alert(eventId: string, reason: string): void {
    counters.alerts.inc({ kind: 'event' });
    counters.outcomes.inc({ state: 'dead' });
    logger.error({ alert: true, eventId, reason: reason.split(':')[0] }, 'event parked as a dead letter');
  }
  function deadLetter(c: ClaimedEvent, reason: string, batch: WriteBatch): void {
    batch.add(
      () => queue.finish(c.inboxId, 'dead', reason),
      () => alert(c.eventId, reason),
    );
  }
  return {
    alert,
    deadLetter,
    afterFailure(c, event, err, log, batch) {
      const decision = deps.retry.decide(err, c.attempts);
      const { reason, code } = decision.failure;
      switch (decision.kind) {
        case 'incident-wait':
          // The EMR refuses the adapter itself: the event waits for the fix, its budget untouched. The
          // incident's alert is the dependency status's, once, not one per event.
          batch.add(
            () => queue.waitLater(c.inboxId, decision.at, reason),
            () => log().debug({ eventType: event.eventType, code }, 'event waits for an EMR incident to end'),
          );
          return false;
        case 'retry-at':
          batch.add(
            () => queue.retryLater(c.inboxId, decision.at, reason),
            () => log().warn({ eventType: event.eventType, code }, 'event failed; will retry'),
          );
          return false;
        case 'give-up':
          deadLetter(c, reason, batch);
          return true;
      }
    },
  };
}

/** Events validated at intake and not yet claimed, kept at most this many (past it, a claim parses the stored body). */
const TAKEN_MAX = 5_000;

/** The validated event of a claimed row: the one intake validated, else its stored body parsed again. */
function createClaimedEvents(queue: Queue): { keep(events: TakenEvent[]): void; take(c: ClaimedEvent): Parsed } {
  const taken = new Map<number, ParsedEvent>();
  return {
    keep(events) {
      for (const e of events) {
        if (taken.size >= TAKEN_MAX) return;
        taken.set(e.inboxId, { event: e.event, entityKey: e.entityKey });
      }
    },
    take(c) {
      const kept = taken.get(c.inboxId);
      if (kept === undefined) return parseStoredEvent(queue.body(c.inboxId), c.eventId);
      taken.delete(c.inboxId);
      return { ok: true, ...kept };
    },
  };
}

export function createEventHandling(deps: EventHandlingDeps): EventHandling {
  const { logger, queue, counters } = deps;
  const applier = createApplier(deps);
  const parking = createParking(deps);
  const claimedEvents = createClaimedEvents(queue);

  /** Discards the event when a newer snapshot of its entity was applied; true when it did. */
  function discardIfStale(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: () => Logger, batch: WriteBatch): boolean {
    const newest = applier.newerSnapshot(event, entityKey);
    if (newest === undefined) return false;
    batch.add(
      () => queue.finish(c.inboxId, 'discarded_stale', `stale: occurredAt ${event.occurredAt} is older than ${newest}`),
      () => {
        counters.outcomes.inc({ state: 'discarded_stale' });
        log().info({ eventType: event.eventType }, 'stale snapshot discarded');
      },
    );
    return true;
  }

  async function apply(c: ClaimedEvent, event: WebhookEvent, entityKey: string, log: () => Logger, batch: WriteBatch): Promise<void> {
    await applier.applyAndMark(c.inboxId, event, entityKey, batch, (applied) => {
      counters.outcomes.inc({ state: 'applied' });
      if (logger.isLevelEnabled('debug')) log().debug({ eventType: event.eventType, claims: applied.claims.length }, 'event applied');
    });
    deps.emrGate.passed();
  }

  return {
    intake() {
      const { events, dead } = queue.intake();
      claimedEvents.keep(events);
      for (const d of dead) parking.alert(d.eventId, d.reason);
      return dead.length;
    },
    async handleClaimed(c, batch) {
      let child: Logger | undefined;
      const log = () => (child ??= logger.child({ eventId: c.eventId, attempt: c.attempts }));
      const parsed = claimedEvents.take(c);
      if (!parsed.ok) {
        parking.deadLetter(c, parsed.reason, batch);
        return true;
      }
      const { event, entityKey } = parsed;
      if (discardIfStale(c, event, entityKey, log, batch)) return true;
      try {
        await apply(c, event, entityKey, log, batch);
        return true;
      } catch (err) {
        return parking.afterFailure(c, event, err, log, batch);
      }
    },
    release(c, batch) {
      batch.add(() => queue.release(c.inboxId));
    },
  };
}
