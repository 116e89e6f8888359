// The background processor: takes in what the receiver stored, applies each entity's events in order
// through the EmrPort, discards stale snapshots, retries what can pass with backoff, and parks the rest
// as dead letters with one alert each. It also drives the mapping outbox and retention.
// runOnce() does what is due now (tests call it with a manual clock); start() runs it in a loop.
import { Counter } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import { describeError, isIncident, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { applyEvent, type Applied, type ApplyDeps, type DocumentEventSink } from './apply.ts';
import { backoffDelay } from '../work/backoff.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { createEntityLocks } from './entity-locks.ts';
import { createMappingOutbox, createMappingStore } from './mappings.ts';
import { parseStoredEvent } from './parse.ts';
import { createQueue, type ClaimedEvent } from './queue.ts';
import { createRetention } from './retention.ts';
import { createEntityVersions } from './versions.ts';

export interface ProcessorDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  emr: EmrPort;
  serviceClient: Pick<ServiceClient, 'putMapping'>;
  documentEvents: DocumentEventSink;
  config: Pick<Config, 'processor' | 'retention'>;
  metrics?: Metrics;
  random?: () => number;
  /** Shared with the pusher: while the EMR refuses the adapter, no event is tried (and none spends its budget). */
  emrGate?: IncidentGate;
}

export interface Processor {
  /** Processes what is due now; returns how many events reached a final state. */
  runOnce(): Promise<number>;
  /**
   * Takes over, at once, the events a process that died was holding. One adapter process owns a database,
   * so at start every lease belongs to a process that is gone. Returns how many.
   */
  recover(): number;
  /** recover(), then runs in a loop. */
  start(): void;
  /** Stops taking work and waits for what is in flight. */
  stop(): Promise<void>;
  depth(): number;
}

const PRUNE_EVERY_MS = 60 * 60 * 1000;

export function createProcessor(deps: ProcessorDeps): Processor {
  const { db, clock, logger, config } = deps;
  const random = deps.random ?? Math.random;
  const settings = config.processor;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const backoff = { baseMs: settings.backoffBaseMs, maxMs: settings.backoffMaxMs };
  const alerts = new Counter({
    name: 'emr_bridge_processor_alerts_total',
    help: 'Incidents that need a person: dead-lettered events and refused mappings.',
    labelNames: ['kind'] as const,
    registers: deps.metrics ? [deps.metrics.registry] : [],
  });
  const outcomes = new Counter({
    name: 'emr_bridge_processor_events_total',
    help: 'Events that reached a final state, by state.',
    labelNames: ['state'] as const,
    registers: deps.metrics ? [deps.metrics.registry] : [],
  });
  const queue = createQueue(db, clock);
  const mappings = createMappingStore(db, clock);
  const outbox = createMappingOutbox({
    db,
    clock,
    logger,
    serviceClient: deps.serviceClient,
    backoff,
    random,
    onAlert: () => alerts.inc({ kind: 'mapping' }),
  });
  const retention = createRetention(db, clock, config.retention);
  const versions = createEntityVersions(db);
  const applyDeps: ApplyDeps = { emr: deps.emr, mappings, documentEvents: deps.documentEvents, locks: createEntityLocks(), versions };
  const markApplied = db.transaction((inboxId: number, entityKey: string, occurredAt: string, eventId: string, applied: Applied) => {
    versions.write(entityKey, { occurredAt, hash: null }, eventId);
    for (const v of applied.versions) versions.write(v.entityKey, v.version, eventId);
    for (const c of applied.claims) mappings.enqueue(c.entityType, c.serviceId, c.emrId);
    queue.finish(inboxId, 'applied');
  });

  function deadLetter(eventId: string, inboxId: number | undefined, reason: string): void {
    if (inboxId !== undefined) queue.finish(inboxId, 'dead', reason);
    alerts.inc({ kind: 'event' });
    outcomes.inc({ state: 'dead' });
    logger.error({ alert: true, eventId, reason: reason.split(':')[0] }, 'event parked as a dead letter');
  }

  async function process(c: ClaimedEvent): Promise<boolean> {
    const log = logger.child({ eventId: c.eventId, attempt: c.attempts });
    const parsed = parseStoredEvent(c.body, c.eventId);
    if (!parsed.ok) {
      deadLetter(c.eventId, c.inboxId, parsed.reason);
      return true;
    }
    const { event, entityKey } = parsed;
    const newest = versions.newest(entityKey)?.occurredAt;
    if (newest !== undefined && event.occurredAt < newest) {
      queue.finish(c.inboxId, 'discarded_stale', `stale: occurredAt ${event.occurredAt} is older than ${newest}`);
      outcomes.inc({ state: 'discarded_stale' });
      log.info({ eventType: event.eventType }, 'stale snapshot discarded');
      return true;
    }
    try {
      const applied = await applyEvent(applyDeps, event);
      markApplied(c.inboxId, entityKey, event.occurredAt, event.eventId, applied);
      for (const v of applied.versions) versions.settle(v.entityKey, v.version);
      emrGate.passed();
      outcomes.inc({ state: 'applied' });
      log.debug({ eventType: event.eventType, claims: applied.claims.length }, 'event applied');
      return true;
    } catch (err) {
      const d = describeError(err);
      const reason = `${d.code ?? d.type}: ${d.message}`;
      if (isIncident(err)) {
        // The EMR refuses the adapter itself: the event waits for the fix, its budget untouched. The
        // incident's alert is the dependency status's, once, not one per event.
        emrGate.failed();
        queue.waitLater(c.inboxId, emrGate.reopensAt(), reason);
        log.debug({ eventType: event.eventType, code: d.code }, 'event waits for an EMR incident to end');
        return false;
      }
      if (isRetryable(err) && c.attempts < settings.maxAttempts) {
        queue.retryLater(c.inboxId, clock.now() + backoffDelay(c.attempts, backoff, random), reason);
        log.warn({ eventType: event.eventType, code: d.code }, 'event failed; will retry');
        return false;
      }
      deadLetter(c.eventId, c.inboxId, reason);
      return true;
    }
  }

  let lastPrune = -Infinity;
  async function runOnce(): Promise<number> {
    const { dead } = queue.intake();
    for (const d of dead) deadLetter(d.eventId, undefined, d.reason);
    let finished = dead.length;
    while (!emrGate.closed()) {
      const claimed = queue.claim(settings.concurrency, settings.leaseMs);
      if (claimed.length === 0) break;
      const results = await Promise.all(claimed.map(process));
      finished += results.filter(Boolean).length;
      if (stopping) break;
    }
    await outbox.runOnce();
    if (clock.now() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = clock.now();
      const pruned = retention.prune();
      if (Object.values(pruned).some((n) => n > 0)) logger.info(pruned, 'retention pruned');
    }
    return finished;
  }

  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  function loop(): void {
    if (stopping) return;
    running = runOnce()
      .catch((err: unknown) => logger.error({ err: describeError(err) }, 'processor pass failed'))
      .finally(() => {
        if (!stopping) timer = setTimeout(loop, settings.pollMs);
      });
  }

  function recover(): number {
    const released = queue.releaseLeases();
    if (released) logger.warn({ released }, 'took over events held by a process that stopped');
    return released;
  }

  return {
    runOnce,
    recover,
    start() {
      stopping = false;
      recover();
      loop();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      await running;
    },
    depth: () => queue.depth() + outbox.pending(),
  };
}
