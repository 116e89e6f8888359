// The outbound pusher: sends queued documents through the service client (retrying network errors,
// timeouts, 5xx and 429 with capped backoff, Retry-After honoured; any other 4xx is final), follows HELD
// documents by polling after releaseAfter or on a schedule, and writes each new status back to the EMR.
// runOnce() does what is due now; start() adds the node-cron scan of the EMR and a real-time loop. The
// steps are send.ts, held.ts, write-back.ts and scan-schedule.ts; the retry rule, the lease and the loop
// are the shared ones of src/work/.
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DocumentType } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { takeOverLeases } from '../work/lease.ts';
import { createPollLoop } from '../work/poll-loop.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import { checkDocument } from './checks.ts';
import { createHeldFollowUp } from './held.ts';
import { createOutbox, type Outbox, type OutboxRow } from './outbox.ts';
import { createPatientLinks } from './patient-links.ts';
import { createScanSchedule } from './scan-schedule.ts';
import { createScanner } from './scan.ts';
import { createSender } from './send.ts';
import { createWriteBack } from './write-back.ts';

export interface PusherDeps {
  db: Db;
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
  /** Sends what is due, follows HELD documents and writes statuses back; returns how many sends and polls it made. */
  runOnce(): Promise<number>;
  /** One scan of the EMR now; 0 while an EMR incident is on. */
  scanOnce(): Promise<number>;
  /** Checks and queues a document pushed through the admin API or the CLI. */
  enqueue(documentType: DocumentType, input: unknown, source?: 'api' | 'cli'): EnqueueResult;
  outbox: Outbox;
  /**
   * Takes over, at once, the sends a process that died was holding (one adapter process owns a database).
   * Sending one again is safe: the service replays its first answer for an externalId. Returns how many.
   */
  recover(): number;
  /** recover(), then the scan schedule and the send loop. */
  start(): void;
  /** Stops both and waits for what is in flight. */
  stop(): Promise<void>;
  depth(): number;
}

/** emr_bridge_outbox_documents: the outbox by status, read when scraped. */
function registerOutboxGauge(db: Db, metrics: Metrics | undefined): void {
  const countByState = db.prepare('SELECT state, count(*) AS n FROM outbox_documents GROUP BY state');
  new Gauge({
    name: 'emr_bridge_outbox_documents',
    help: 'Documents in the outbox, by status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED).',
    labelNames: ['status'] as const,
    registers: metrics ? [metrics.registry] : [],
    collect() {
      this.reset();
      for (const r of countByState.all() as { state: string; n: number }[]) this.set({ status: r.state }, r.n);
    },
  });
}

export function createPusher(deps: PusherDeps): Pusher {
  const { clock, logger } = deps;
  const s = deps.config.pusher;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const heldPollMs = s.heldPollSeconds * 1000;
  const outbox = createOutbox(deps.db, clock);
  const links = createPatientLinks({ db: deps.db, clock });
  registerOutboxGauge(deps.db, deps.metrics);
  const retry = createRetryPolicy({
    clock,
    budget: { maxAttempts: s.maxAttempts, backoff: { baseMs: s.backoffBaseMs, maxMs: s.backoffMaxMs } },
    random: deps.random ?? Math.random,
  });
  const sender = createSender({
    clock,
    logger,
    outbox,
    links,
    serviceClient: deps.serviceClient,
    retry,
    settings: { leaseMs: s.leaseMs, concurrency: s.concurrency, heldPollMs },
    stopping: () => loop.stopping(),
  });
  const held = createHeldFollowUp({ clock, logger, outbox, serviceClient: deps.serviceClient, heldPollMs });
  const writeBack = createWriteBack({ logger, outbox, links, emr: deps.emr, emrGate });
  const scans = createScanSchedule({ scanner: createScanner({ ...deps, outbox }), emrGate, logger });

  async function runOnce(): Promise<number> {
    const sent = await sender.sendDue();
    const polled = await held.followDue(s.heldPollBatch);
    await writeBack.syncDue(s.heldPollBatch);
    return sent + polled;
  }

  const loop = createPollLoop({ pass: runOnce, pauseMs: s.pollMs, logger, failureMessage: 'pusher pass failed' });
  const recover = () => takeOverLeases(outbox.releaseLeases, logger, 'took over document sends held by a process that stopped');

  return {
    runOnce,
    scanOnce: scans.scanOnce,
    enqueue(documentType, input, source = 'api') {
      // A caller at the other end of the API can fix and resend, so a refusal is answered, not stored.
      const checked = checkDocument(documentType, input);
      if (!checked.ok) return checked;
      const { row, created } = outbox.enqueue({ externalId: checked.request.externalId, documentType, source, request: checked.request });
      return { ok: true, row, created };
    },
    outbox,
    recover,
    start() {
      recover();
      scans.start(s.scanCron);
      loop.start();
    },
    async stop() {
      const stopped = loop.stop();
      await scans.stop();
      await stopped;
    },
    depth: () => outbox.openCount(),
  };
}
