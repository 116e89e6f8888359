// The outbound pusher: sends queued documents through the service client (retrying network errors,
// timeouts, 5xx and 429 with capped backoff, Retry-After honoured; any other 4xx is final), follows HELD
// documents by polling after releaseAfter or on a schedule, and writes each new status back to the EMR.
// runOnce() does what is due now; start() adds the node-cron scan of the EMR and a real-time loop. The
// steps are send.ts, held.ts, write-back.ts and scan-schedule.ts; the retry rule and the loop are the
// shared ones of src/work/, the outbox is the document store (src/storage/documents.ts).
//
// A pass goes on while work is due at once (a full batch of follow-ups or write-backs leaves more). New
// documents (an enqueue, a scan's commit, a document event with a status for the EMR) are announced through
// the coordination to every replica, whose loop then starts a pass at once rather than after its pause;
// passes never overlap (a pass asked for while one runs makes that one go round again). The EMR scan runs in
// one replica at a time; so do the follow-ups (HELD polls, write-backs), which need no lease of their own.
// Sends need none of that: each row is claimed with its lease (./send.ts).
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DocumentType } from '../contract/events.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { Coordination } from '../storage/coordination.ts';
import type { DocumentStore, OutboxRow } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { createPollLoop } from '../work/poll-loop.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import { checkDocument } from './checks.ts';
import { createHeldFollowUp } from './held.ts';
import { createScanSchedule } from './scan-schedule.ts';
import { createScanner } from './scan.ts';
import { createSender } from './send.ts';
import { createWriteBack } from './write-back.ts';

export interface PusherDeps {
  /** The document outbox. */
  documents: DocumentStore;
  /** Links a service patient made for a document to its EMR patient. */
  mappings: Pick<MappingStore, 'link'>;
  /** Which replica scans the EMR and follows up; wake-ups when any replica stores documents. */
  coordination: Coordination;
  clock: Clock;
  logger: Logger;
  emr: EmrPort;
  serviceClient: Pick<ServiceClient, 'postDocument' | 'getDocument'>;
  config: Pick<Config, 'pusher'>;
  metrics?: Metrics;
  random?: () => number;
  /** Shared with the processor: while the EMR refuses the adapter, nothing is written back to it. */
  emrGate?: IncidentGate;
}

/** A document pushed through the admin API or the CLI: refused with the checks' reason, or the row that stands. */
export type EnqueueResult = { ok: false; code: string; reason: string } | { ok: true; row: OutboxRow; created: boolean };

export interface Pusher {
  /**
   * Sends what is due, follows HELD documents and writes statuses back, again while a full batch leaves more;
   * returns how many sends and polls it made. Called while a pass runs, it returns that pass, which goes round
   * once more.
   */
  runOnce(): Promise<number>;
  /** One scan of the EMR now; 0 while an EMR incident is on or another replica scans. */
  scanOnce(): Promise<number>;
  /** Checks and queues a document pushed through the admin API or the CLI. */
  enqueue(documentType: DocumentType, input: unknown, source?: 'api' | 'cli'): Promise<EnqueueResult>;
  outbox: DocumentStore;
  /**
   * Takes over, at once, the sends only a process that stopped can hold (all of them when one process owns
   * the database; with replicas, none: a dead one's leases run out and are claimed then). Sending one again is
   * safe: the service replays its first answer for an externalId. Returns how many.
   */
  recover(): Promise<number>;
  /** The scan schedule and the send loop, whose first pass recovers first; woken by the coordination. */
  start(): void;
  /** Stops both and waits for what is in flight. */
  stop(): Promise<void>;
  depth(): Promise<number>;
}

/** emr_bridge_outbox_documents: the outbox by status, read when scraped. */
function registerOutboxGauge(documents: Pick<DocumentStore, 'countByState'>, metrics: Metrics | undefined): void {
  new Gauge({
    name: 'emr_bridge_outbox_documents',
    help: 'Documents in the outbox, by status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED).',
    labelNames: ['status'] as const,
    registers: metrics ? [metrics.registry] : [],
    async collect() {
      const counts = await documents.countByState();
      this.reset();
      for (const r of counts) this.set({ status: r.state }, r.count);
    },
  });
}

export function createPusher(deps: PusherDeps): Pusher {
  const { clock, logger, coordination } = deps;
  const s = deps.config.pusher;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const heldPollMs = s.heldPollSeconds * 1000;
  const outbox = deps.documents;
  registerOutboxGauge(outbox, deps.metrics);
  const retry = createRetryPolicy({
    clock,
    budget: { maxAttempts: s.maxAttempts, backoff: { baseMs: s.backoffBaseMs, maxMs: s.backoffMaxMs } },
    random: deps.random ?? Math.random,
  });
  const sender = createSender({
    clock,
    logger,
    outbox,
    mappings: deps.mappings,
    serviceClient: deps.serviceClient,
    retry,
    settings: { leaseMs: s.leaseMs, concurrency: s.concurrency, heldPollMs },
    stopping: () => loop.stopping(),
  });
  const held = createHeldFollowUp({ clock, logger, outbox, serviceClient: deps.serviceClient, heldPollMs });
  const writeBack = createWriteBack({ logger, outbox, mappings: deps.mappings, emr: deps.emr, emrGate });
  /** Every replica (this one too) hears of new documents. */
  const announce = () => coordination.notify('documents');
  const scanner = createScanner({ logger, emr: deps.emr, outbox, onFiled: announce });
  const scans = createScanSchedule({ scanner, emrGate, coordination, logger });

  let current: Promise<number> | undefined;
  let again = false;
  let recovered = false;
  let unsubscribe: (() => void) | undefined;

  /** HELD polls and write-backs, in one replica at a time; says whether a full batch of either leaves more. */
  async function followUps(): Promise<{ polled: number; more: boolean }> {
    const done = await coordination.exclusive('document-follow-ups', async () => {
      const polled = await held.followDue(s.heldPollBatch);
      const synced = await writeBack.syncDue(s.heldPollBatch);
      return { polled, more: polled === s.heldPollBatch || synced === s.heldPollBatch };
    });
    return done ?? { polled: 0, more: false };
  }

  async function passes(): Promise<number> {
    let done = 0;
    do {
      again = false;
      const sent = await sender.sendDue();
      const { polled, more } = await followUps();
      done += sent + polled;
      if (more) again = true;
    } while (again && !loop.stopping());
    return done;
  }

  function runOnce(): Promise<number> {
    if (current) {
      again = true;
      return current;
    }
    const pass = passes().finally(() => {
      current = undefined;
    });
    current = pass;
    return pass;
  }

  async function recover(): Promise<number> {
    const released = await outbox.releaseLeases();
    if (released) logger.warn({ released }, 'took over document sends held by a process that stopped');
    return released;
  }

  /** The loop's pass: the first one takes over what a stopped process held, before sending. */
  async function loopPass(): Promise<number> {
    if (!recovered) {
      await recover();
      recovered = true;
    }
    return runOnce();
  }

  const loop = createPollLoop({ pass: loopPass, pauseMs: s.pollMs, logger, failureMessage: 'pusher pass failed' });

  return {
    runOnce,
    scanOnce: scans.scanOnce,
    async enqueue(documentType, input, source = 'api') {
      // A caller at the other end of the API can fix and resend, so a refusal is answered, not stored.
      const checked = checkDocument(documentType, input);
      if (!checked.ok) return checked;
      const { row, created } = await outbox.enqueue({ externalId: checked.request.externalId, documentType, source, request: checked.request });
      if (created) announce();
      return { ok: true, row, created };
    },
    outbox,
    recover,
    start() {
      unsubscribe = coordination.onWork('documents', () => loop.wake());
      scans.start(s.scanCron);
      loop.start();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      const stopped = loop.stop();
      await scans.stop();
      await stopped;
      await current?.catch(() => undefined);
    },
    depth: () => outbox.openCount(),
  };
}
