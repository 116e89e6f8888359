// The outbound pusher: sends queued documents through the service client (retrying network errors,
// timeouts, 5xx and 429 with capped backoff, Retry-After honoured; any other 4xx is final), follows HELD
// documents by polling after releaseAfter or on a schedule, and writes each new status back to the EMR.
// runOnce() does what is due now; start() adds the node-cron scan of the EMR and a real-time loop. The
// steps are send.ts, held.ts, write-back.ts and scan-schedule.ts; the retry rule, the lease and the loop
// are the shared ones of src/work/.
//
// A pass goes on while work is due at once (a full batch of follow-ups or write-backs leaves more), and once
// started, new documents (an enqueue, a scan's commit) start a pass at once rather than after the loop's
// pause; passes never overlap (a pass asked for while one runs makes that one go round again).
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DocumentType } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import { describeError } from '../errors.ts';
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
  /**
   * Sends what is due, follows HELD documents and writes statuses back, again while a full batch leaves more;
   * returns how many sends and polls it made. Called while a pass runs, it returns that pass, which goes round
   * once more.
   */
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

/**
 * The requests of documents queued here and not yet sent are also kept in memory, parsed, up to this much
 * JSON (a few hundred 100 KB documents): a send then neither reads its request back nor parses it.
 */
const REQUEST_MEMORY_CHARS = 64 * 1024 * 1024;

export function createPusher(deps: PusherDeps): Pusher {
  const { clock, logger } = deps;
  const s = deps.config.pusher;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const heldPollMs = s.heldPollSeconds * 1000;
  const outbox = createOutbox(deps.db, clock, { requestMemoryChars: REQUEST_MEMORY_CHARS });
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
  const scans = createScanSchedule({ scanner: createScanner({ ...deps, outbox, onFiled: () => kick() }), emrGate, logger });

  let current: Promise<number> | undefined;
  let again = false;
  let started = false;

  async function passes(): Promise<number> {
    let done = 0;
    do {
      again = false;
      const sent = await sender.sendDue();
      const polled = await held.followDue(s.heldPollBatch);
      const synced = await writeBack.syncDue(s.heldPollBatch);
      done += sent + polled;
      if (polled === s.heldPollBatch || synced === s.heldPollBatch) again = true;
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

  /** New work: a pass now, once started (tests drive passes themselves). */
  function kick(): void {
    if (started && !loop.stopping()) runOnce().catch((err: unknown) => logger.error({ err: describeError(err) }, 'pusher pass failed'));
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
      if (created) kick();
      return { ok: true, row, created };
    },
    outbox,
    recover,
    start() {
      recover();
      started = true;
      scans.start(s.scanCron);
      loop.start();
    },
    async stop() {
      const stopped = loop.stop();
      await scans.stop();
      await stopped;
      started = false;
      await current?.catch(() => undefined);
    },
    depth: () => outbox.openCount(),
  };
}
