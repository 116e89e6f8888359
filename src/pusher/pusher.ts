// The outbound pusher: sends queued documents through the service client (retrying network errors,
// timeouts, 5xx and 429 with capped backoff, Retry-After honoured; any other 4xx is final), follows HELD
// documents by polling after releaseAfter or on a schedule, and writes each new status back to the EMR.
// runOnce() does what is due now; start() adds the node-cron scan of the EMR and a real-time loop. The
// steps are send.ts, held.ts, write-back.ts and scan-schedule.ts; the retry rule, the lease takeover and the
// worker shape (recover, rounds of passes, wake-ups, stop) are the shared ones of src/work/, the outbox is
// the document store (src/storage/documents.ts), the metrics src/metrics/pusher-metrics.ts.
//
// A round goes on while work is due at once (a full batch of follow-ups or write-backs leaves more). New
// documents (an enqueue, a scan's commit, a document event with a status for the EMR) are announced through
// the coordination to every replica, whose worker then starts a round at once rather than after its pause;
// rounds never overlap (a round asked for while one runs makes that one go round again). The EMR scan runs in
// one replica at a time; so do the follow-ups (HELD polls, write-backs), which need no lease of their own.
// Sends need none of that: each row is claimed with its lease (./send.ts).
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DocumentType } from '../contract/events.ts';
import type { EmrDocument, EmrPort } from '../emr/port.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { registerPusherMetrics } from '../metrics/pusher-metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { Coordination } from '../storage/coordination.ts';
import type { DocumentStore, OutboxRow } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import { inSpan, SPAN_NAMES } from '../tracing/spans.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import { takeOverLeases } from '../work/lease.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';
import { createWorker, type PassResult, type Worker } from '../work/worker.ts';
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

/**
 * A worker (src/work/worker.ts) whose runOnce() sends what is due, follows HELD documents and writes statuses
 * back, and returns how many sends and polls it made; whose recover() takes over, at once, the sends only a
 * process that stopped can hold (all of them when one process owns the database; with replicas, none: a dead
 * one's leases run out and are claimed then; sending one again is safe, the service replays its first answer
 * for an externalId); and whose start() and stop() run the EMR scan's schedule too.
 */
export interface Pusher extends Worker {
  /** One scan of the EMR now; 0 while an EMR incident is on or another replica scans. */
  scanOnce(): Promise<number>;
  /** Checks and queues a document pushed through the admin API or the CLI. */
  enqueue(documentType: DocumentType, input: unknown, source?: 'api' | 'cli'): Promise<EnqueueResult>;
  /** Files a document a pushed EMR handed in (EmrInbound.documentPushed); resolves once committed. */
  filePushed(doc: EmrDocument): Promise<void>;
  /** A pushed EMR withdraws a document (EmrInbound.documentCancelled): refused here while it has not gone. */
  cancelPushed(documentId: string): Promise<'cancelled' | 'sent' | 'unknown'>;
  outbox: DocumentStore;
  depth(): Promise<number>;
}

export function createPusher(deps: PusherDeps): Pusher {
  const { clock, logger, coordination } = deps;
  const s = deps.config.pusher;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const heldPollMs = s.heldPollSeconds * 1000;
  const outbox = deps.documents;
  registerPusherMetrics(outbox, deps.metrics);
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
    stopping: () => worker.stopping(),
  });
  const held = createHeldFollowUp({ clock, logger, outbox, serviceClient: deps.serviceClient, heldPollMs });
  const writeBack = createWriteBack({ logger, outbox, mappings: deps.mappings, emr: deps.emr, emrGate });
  /** Every replica (this one too) hears of new documents. */
  const announce = () => coordination.notify('documents');
  const scanner = createScanner({ logger, emr: deps.emr, outbox, onFiled: announce });
  const scans = createScanSchedule({ scanner, emrGate, coordination, logger });

  /** HELD polls and write-backs, in one replica at a time; says whether a full batch of either leaves more. */
  async function followUps(): Promise<{ polled: number; more: boolean }> {
    const done = await coordination.exclusive('document-follow-ups', async () => {
      const polled = await held.followDue(s.heldPollBatch);
      const synced = await writeBack.syncDue(s.heldPollBatch);
      return { polled, more: polled === s.heldPollBatch || synced === s.heldPollBatch };
    });
    return done ?? { polled: 0, more: false };
  }

  /** One pass: the sends due, then the follow-ups; `done`: the sends and polls made. */
  async function pass(): Promise<PassResult> {
    const sent = await sender.sendDue();
    const { polled, more } = await followUps();
    return { done: sent + polled, more };
  }

  const worker = createWorker({
    name: 'pusher',
    pass,
    recover: () => takeOverLeases(() => outbox.releaseLeases(), logger, 'took over document sends held by a process that stopped'),
    wakeOn: (wake) => coordination.onWork('documents', wake),
    pauseMs: s.pollMs,
    logger,
  });

  return {
    ...worker,
    scanOnce: scans.scanOnce,
    filePushed: (doc) => scanner.fileOne(doc),
    async cancelPushed(documentId) {
      const row = await outbox.get(documentId);
      if (!row) return 'unknown';
      if (row.state === 'REJECTED') return 'cancelled';
      // A row claimed by a sender may be on its way to the service: too late to withdraw, as once it was sent.
      if (row.state !== 'queued' || (row.lease_until ?? 0) > clock.now()) return 'sent';
      await outbox.recordOutcome(documentId, { state: 'REJECTED', code: 'cancelled_by_emr', reason: 'the EMR withdrew it (MDM^T11) before it was sent' });
      logger.info({ externalId: documentId }, 'document withdrawn by the EMR before it was sent');
      return 'cancelled';
    },
    async enqueue(documentType, input, source = 'api') {
      // A caller at the other end of the API can fix and resend, so a refusal is answered, not stored.
      const checked = checkDocument(documentType, input);
      if (!checked.ok) return checked;
      const { externalId } = checked.request;
      // A trace of its own, whose `document file` span is stored with the row (its send and follow-ups are its children).
      const attributes = { 'emr_bridge.document.external_id': externalId, 'emr_bridge.document.type': documentType, 'emr_bridge.document.source': source };
      const { row, created } = await inSpan(
        SPAN_NAMES.documentFile,
        attributes,
        async (span) => {
          const filed = await outbox.enqueue({ externalId, documentType, source, request: checked.request, traceContext: span.stored() });
          span.set({ 'emr_bridge.document.status': filed.row.state });
          return filed;
        },
        { parent: null },
      );
      if (created) announce();
      return { ok: true, row, created };
    },
    outbox,
    start() {
      // A pushed EMR hands documents in (filePushed): there is nothing to scan for.
      if (deps.emr.documentSource !== 'pushed') scans.start(s.scanCron);
      worker.start();
    },
    async stop() {
      const stopped = worker.stop();
      await scans.stop();
      await stopped;
    },
    depth: () => outbox.openCount(),
  };
}
