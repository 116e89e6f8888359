// The background processor: takes in what the receiver stored, applies each entity's events in order
// through the EmrPort, discards stale snapshots, retries what can pass with backoff, and parks the rest
// as dead letters with one alert each. It also drives the mapping outbox and retention. What happens to one
// event is handle-event.ts; the retry rule, the lease and the worker shape (recover, rounds of passes, wake-ups
// from the coordination, stop) are the shared ones of src/work/, its metrics src/metrics/processor-metrics.ts.
// runOnce() does what is due now (tests call it with a manual clock); start() runs it in a loop.
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
import type { ClaimedEvent } from '../storage/processing.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { leaseLeftToStart, takeOverLeases } from '../work/lease.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import { createWorker, type PassResult, type Worker } from '../work/worker.ts';
import type { DocumentEventSink } from './apply.ts';
import { createEventHandling } from './handle-event.ts';
import { createRetention, type PruneAudit, type PruneDocuments, type PruneEmr } from './retention.ts';
import { createOutcomeBatch, type OutcomeBatch } from './write-batch.ts';

export interface ProcessorDeps {
  /** Where the processor keeps its state (src/storage: SQLite or PostgreSQL). */
  stores: ProcessorStores;
  /** The document outbox's retention (the pusher's store), run with the processor's hourly pass. */
  pruneFinishedDocuments?: PruneDocuments;
  /** The audit trail's retention (RETENTION_AUDIT_DAYS, its own cutoff), run with the same hourly pass. */
  pruneAudit?: PruneAudit;
  /** The EMR module's marks of messages it took (EmrPort.pruneBefore), at RETENTION_EVENT_ID_DAYS. */
  pruneEmr?: PruneEmr;
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
  /** Wake-ups when any replica stored events (the loop's pause is cut short); without it the loop only polls. */
  coordination?: Pick<Coordination, 'onWork'>;
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
 * Events claimed per batch, for each one applied at once (PROCESSOR_CONCURRENCY): a batch's outcomes cost
 * one commit, so the larger the batch the fewer fsyncs per event (measured: 1 to 4 per slot cost more CPU
 * and commits per event, 64 gained nothing over 16). An outcome waits for its batch to end before it is on
 * disk. The lease is taken for the whole batch, so an event starts only while half of it is left (a slow EMR
 * makes the rest of the batch go back untried): another replica cannot claim an event still being applied.
 */
const BATCH_PER_SLOT = 16;

/**
 * Inbox rows taken in per pass. A pass that took this many (or delivered mappings from a full batch) leaves more
 * behind, so the loop runs the next one at once instead of pausing PROCESSOR_POLL_MS: a backlog drains at the
 * processor's pace, not 500 rows (and 20 mappings) a pause.
 */
const INTAKE_PER_PASS = 500;

/** How often the retention pass runs. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Retention, at most once per PRUNE_EVERY_MS (the first pass prunes). */
function createPruneWhenDue(
  deps: Pick<ProcessorDeps, 'stores' | 'pruneFinishedDocuments' | 'pruneAudit' | 'pruneEmr' | 'clock' | 'logger' | 'config'>,
): () => Promise<void> {
  const retention = createRetention({
    store: deps.stores.retention,
    pruneDocuments: deps.pruneFinishedDocuments ?? (async () => 0),
    ...(deps.pruneAudit ? { pruneAudit: deps.pruneAudit } : {}),
    ...(deps.pruneEmr ? { pruneEmr: deps.pruneEmr } : {}),
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
    backoff,
    random,
    onAlert: () => counters.alerts.inc({ kind: 'mapping' }),
  });
  const retry = createRetryPolicy({ clock, budget: { maxAttempts: settings.maxAttempts, backoff }, random, gate: emrGate });
  const events = createEventHandling({ logger, stores, emr: deps.emr, documentEvents: deps.documentEvents, retry, emrGate, counters });
  const pruneWhenDue = createPruneWhenDue(deps);

  const batchSize = settings.concurrency * BATCH_PER_SLOT;
  /** Whether to start another event: not once stop() was called or an EMR incident closed the gate. */
  const going = () => !worker.stopping() && !emrGate.closed();

  /**
   * Handles a claimed batch (leased until `leaseUntil` or later), `concurrency` events at a time, each outcome
   * added to `batch`; once `going()` turns false, less than half the lease is left, or an event throws, the events
   * not started yet are handed back untried.
   */
  async function handleBatch(claimed: ClaimedEvent[], leaseUntil: number, batch: OutcomeBatch): Promise<{ finished: number; error?: unknown }> {
    let next = 0;
    let finished = 0;
    let error: unknown;
    const worker = async () => {
      while (next < claimed.length) {
        const c = claimed[next++]!;
        if (error !== undefined || !going() || !leaseLeftToStart(leaseUntil, settings.leaseMs, clock.now())) {
          events.release(c, batch);
          continue;
        }
        try {
          if (await events.handleClaimed(c, batch)) finished++;
        } catch (err) {
          // A bug, not a failed attempt: the event keeps its lease until it runs out; the others are written.
          error ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, claimed.length) }, worker));
    return error === undefined ? { finished } : { finished, error };
  }

  /**
   * Claims due events a batch at a time (each entity's oldest open one, up to `batchSize`) and handles them
   * until none is due, an EMR incident closes the gate, or stop(). A batch's outcomes are written in one
   * transaction, which also claims the next batch.
   */
  async function applyDue(): Promise<number> {
    let finished = 0;
    // The store takes each lease until its own now + leaseMs, a moment after this one: this is the earliest end.
    let leaseUntil = clock.now() + settings.leaseMs;
    let claimed = going() ? await queue.claim(batchSize, settings.leaseMs) : [];
    while (claimed.length > 0) {
      const batch = createOutcomeBatch();
      const handled = await handleBatch(claimed, leaseUntil, batch);
      finished += handled.finished;
      const next = handled.error === undefined && going() ? { limit: batchSize, leaseMs: settings.leaseMs } : undefined;
      leaseUntil = clock.now() + settings.leaseMs;
      claimed = await queue.commit(batch.outcomes(), next);
      batch.committed();
      if (handled.error !== undefined) throw handled.error;
    }
    return finished;
  }

  /**
   * One pass: intake, what is due, the mapping outbox, retention. `done`: the events that reached a final state;
   * `more` when intake or the outbox left rows behind.
   */
  async function pass(): Promise<PassResult> {
    const intake = await events.intake(INTAKE_PER_PASS);
    const finished = await applyDue();
    const mappings = await outbox.pass();
    await pruneWhenDue();
    return { done: intake.parked + finished, more: intake.full || mappings.more };
  }

  const { coordination } = deps;
  const worker = createWorker({
    name: 'processor',
    pass,
    recover: () => takeOverLeases(queue.releaseLeases, logger, 'took over events held by a process that stopped'),
    ...(coordination ? { wakeOn: (wake: () => void) => coordination.onWork('events', wake) } : {}),
    pauseMs: settings.pollMs,
    logger,
  });

  return { ...worker, depth: async () => (await stores.readings.depth()) + (await outbox.pending()) };
}
