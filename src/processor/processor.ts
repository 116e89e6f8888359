// The background processor: takes in what the receiver stored, applies each entity's events in order
// through the EmrPort, discards stale snapshots, retries what can pass with backoff, and parks the rest
// as dead letters with one alert each. It also runs the mapping outbox (a worker of its own, woken as events
// are applied) and retention. What happens to one event is handle-event.ts; how events flow through their
// slots, with no barrier between batches, is flow.ts; the retry rule, the lease and the worker shape (recover,
// rounds of passes, wake-ups from the coordination, stop) are the shared ones of src/work/, its metrics
// src/metrics/processor-metrics.ts. runOnce() does what is due now (tests call it with a manual clock);
// start() runs it in a loop.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import { createMappingOutbox } from '../mappings/outbox.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createProcessorMetrics } from '../metrics/processor-metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { Coordination } from '../storage/coordination.ts';
import type { ProcessorStores } from '../storage/processor-stores.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { takeOverLeases } from '../work/lease.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import { createWorker, type PassResult, type Worker } from '../work/worker.ts';
import type { DocumentEventSink } from './apply.ts';
import { createEventHandling } from './handle-event.ts';
import { runFlow } from './flow.ts';
import { createRetention, type PruneAudit, type PruneDocuments, type PruneEmr, type PruneQuarantine } from './retention.ts';

export interface ProcessorDeps {
  /** Where the processor keeps its state (src/storage: SQLite or PostgreSQL). */
  stores: ProcessorStores;
  /** The document outbox's retention (the pusher's store), run with the processor's hourly pass. */
  pruneFinishedDocuments?: PruneDocuments;
  /** The audit trail's retention (RETENTION_AUDIT_DAYS, its own cutoff), run with the same hourly pass. */
  pruneAudit?: PruneAudit;
  /** The EMR module's marks of messages it took (EmrPort.pruneBefore), at RETENTION_EVENT_ID_DAYS. */
  pruneEmr?: PruneEmr;
  /** The quarantine's rows applied or dismissed, at RETENTION_EVENT_ID_DAYS. */
  pruneQuarantine?: PruneQuarantine;
  clock: Clock;
  logger: Logger;
  emr: EmrPort;
  serviceClient: Pick<ServiceClient, 'putMapping'>;
  documentEvents: DocumentEventSink;
  /** `service.maxConcurrency`: mapping posts in flight at once. */
  config: Pick<Config, 'processor' | 'retention'> & { service: Pick<Config['service'], 'maxConcurrency'> };
  metrics?: Metrics;
  random?: () => number;
  /** Shared with the pusher: while the EMR refuses the adapter, no event is tried (and none spends its budget). */
  emrGate?: IncidentGate;
  /** Wake-ups when any replica stored events (the loop's pause is cut short); without it the loop only polls. */
  coordination?: Pick<Coordination, 'onWork'>;
  /**
   * Events in flight allowed now, at most PROCESSOR_CONCURRENCY (intake first, src/work/intake-priority.ts: fewer
   * while webhooks queue); the inbox rows taken in at a time follow it. Without it, always the most.
   */
  limit?: () => number;
}

/**
 * A worker (src/work/worker.ts) whose runOnce() processes what is due now and returns how many events reached
 * a final state, and whose recover() takes over, at once, the events a process that died was holding, as far
 * as the store can tell which those are (SQLite: every lease; PostgreSQL: none, they run out).
 */
export interface Processor extends Worker {
  /** Events not yet final plus mappings waiting to be posted. */
  depth(): Promise<number>;
}

/**
 * Inbox rows taken in per intake. A pass that took this many leaves more behind, so the loop runs the next one at
 * once instead of pausing PROCESSOR_POLL_MS: a backlog drains at the processor's pace, not 500 rows a pause.
 */
const INTAKE_PER_PASS = 500;
/**
 * While intake comes first, rows taken in per event allowed in flight: taking in is a turn of the event loop
 * (each row read, unsealed, validated and written), so it shrinks with the events' share of the loop.
 */
const INTAKE_PER_SLOT = 16;

/** How often the retention pass runs. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * How often a pass looks for waiting events whose records are all mapped now: the backstop for a mapping set on
 * another replica, or between an event's decision to wait and its commit (a mapping wakes its events at once too).
 */
const WAKE_EVERY_MS = 1_000;

/** The waiting events whose records were mapped, made due: at most once per WAKE_EVERY_MS. */
function createWakeWhenDue(deps: Pick<ProcessorDeps, 'stores' | 'clock'>): () => Promise<void> {
  let last = -Infinity;
  return async () => {
    if (deps.clock.now() - last < WAKE_EVERY_MS) return;
    last = deps.clock.now();
    await deps.stores.crosswalk.wakeMapped();
  };
}

/** Retention, at most once per PRUNE_EVERY_MS (the first pass prunes). */
function createPruneWhenDue(
  deps: Pick<ProcessorDeps, 'stores' | 'pruneFinishedDocuments' | 'pruneAudit' | 'pruneEmr' | 'pruneQuarantine' | 'clock' | 'logger' | 'config'>,
): () => Promise<void> {
  const retention = createRetention({
    store: deps.stores.retention,
    pruneDocuments: deps.pruneFinishedDocuments ?? (async () => 0),
    ...(deps.pruneAudit ? { pruneAudit: deps.pruneAudit } : {}),
    ...(deps.pruneEmr ? { pruneEmr: deps.pruneEmr } : {}),
    ...(deps.pruneQuarantine ? { pruneQuarantine: deps.pruneQuarantine } : {}),
    clock: deps.clock,
    settings: deps.config.retention,
  });
  let lastPrune = -Infinity;
  return async () => {
    if (deps.clock.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = deps.clock.now();
    const pruned = await retention.prune();
    if (Object.values(pruned).some((n) => n > 0)) deps.logger.info(pruned, 'retention pruned');
  };
}

export function createProcessor(deps: ProcessorDeps): Processor {
  const { stores, clock, logger } = deps;
  const { queue } = stores;
  const settings = deps.config.processor;
  const random = deps.random ?? Math.random;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const backoff = { baseMs: settings.backoffBaseMs, maxMs: settings.backoffMaxMs };
  const counters = createProcessorMetrics(deps.metrics);
  const outbox = createMappingOutbox({
    store: stores.mappingOutbox,
    leaseMs: settings.leaseMs,
    clock,
    logger,
    serviceClient: deps.serviceClient,
    concurrency: deps.config.service.maxConcurrency,
    backoff,
    random,
    onAlert: () => counters.alerts.inc({ kind: 'mapping' }),
  });
  const retry = createRetryPolicy({ clock, budget: { maxAttempts: settings.maxAttempts, backoff }, random, gate: emrGate });
  const events = createEventHandling({
    logger,
    stores,
    emr: deps.emr,
    documentEvents: deps.documentEvents,
    retry,
    emrGate,
    counters,
    // Posted as events are applied, not after the pass: the backlog of mappings stays near zero while events flow.
    onMappingsQueued: () => mappingWorker.wake(),
  });
  const pruneWhenDue = createPruneWhenDue(deps);
  const wakeWhenDue = createWakeWhenDue(deps);

  /** Whether to start another event: not once stop() was called or an EMR incident closed the gate. */
  const going = () => !worker.stopping() && !emrGate.closed();

  /** One pass: intake, waiting events whose records were mapped, then what is due (taking in what arrives meanwhile), then retention. */
  async function pass(): Promise<PassResult> {
    let parked = 0;
    const intake = async () => {
      const taken = await events.intake(deps.limit ? Math.min(INTAKE_PER_PASS, deps.limit() * INTAKE_PER_SLOT) : INTAKE_PER_PASS);
      parked += taken.parked;
      return taken;
    };
    const first = await intake();
    await wakeWhenDue();
    const finished = await runFlow({
      queue,
      handle: events.handleClaimed,
      release: events.release,
      keysOf: events.keysOf,
      intake: async () => (await intake()).taken > 0,
      going,
      concurrency: settings.concurrency,
      ...(deps.limit ? { limit: deps.limit } : {}),
      leaseMs: settings.leaseMs,
      clock,
    });
    await pruneWhenDue();
    return { done: parked + finished, more: first.full };
  }

  /** The mapping outbox: a worker of its own, so posts keep pace with events instead of following each pass. */
  const mappingWorker = createWorker({ name: 'mapping outbox', pass: () => outbox.pass(), pauseMs: settings.pollMs, logger });

  const { coordination } = deps;
  const worker = createWorker({
    name: 'processor',
    pass,
    recover: () => takeOverLeases(queue.releaseLeases, logger, 'took over events held by a process that stopped'),
    ...(coordination ? { wakeOn: (wake: () => void) => coordination.onWork('events', wake) } : {}),
    pauseMs: settings.pollMs,
    logger,
  });

  return {
    start() {
      worker.start();
      mappingWorker.start();
    },
    async stop() {
      // Events first: what they still apply queues mappings, which the outbox's last round may post.
      await worker.stop();
      await mappingWorker.stop();
    },
    async runOnce() {
      const done = await worker.runOnce();
      await mappingWorker.runOnce();
      return done;
    },
    recover: worker.recover,
    wake() {
      worker.wake();
      mappingWorker.wake();
    },
    stopping: worker.stopping,
    failing: () => worker.failing() || mappingWorker.failing(),
    depth: async () => (await stores.readings.depth()) + (await outbox.pending()),
  };
}
