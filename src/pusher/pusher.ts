// The outbound pusher: sends queued documents through the service client (retrying network errors,
// timeouts, 5xx and 429 with capped backoff, Retry-After honoured; any other 4xx is final), follows HELD
// documents by polling after releaseAfter or on a schedule, and writes each new status back to the EMR.
// runOnce() does what is due now; start() adds the node-cron scan of the EMR and a real-time loop.
import cron, { type ScheduledTask } from 'node-cron';
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DocumentRequest } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import type { EmrPort } from '../emr/port.ts';
import { describeError, isIncident, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { backoffDelay } from '../work/backoff.ts';
import { createIncidentGate, type IncidentGate } from '../work/incident-gate.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { ServiceCallError } from '../service-client/errors.ts';
import { checkDocument } from './checks.ts';
import { createOutbox, type OutboxRow } from './outbox.ts';
import { createPatientLinks } from './patient-links.ts';
import { createScanner } from './scan.ts';

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

const LEASE_MS = 60_000;
const WINDOW = 16;

export function createPusher(deps: PusherDeps) {
  const { clock, logger, config } = deps;
  const s = config.pusher;
  const random = deps.random ?? Math.random;
  const emrGate = deps.emrGate ?? createIncidentGate(clock);
  const outbox = createOutbox(deps.db, clock);
  const links = createPatientLinks({ db: deps.db, clock });
  const scanner = createScanner({ ...deps, outbox });
  const heldPollMs = s.heldPollSeconds * 1000;
  const countByState = deps.db.prepare('SELECT state, count(*) AS n FROM outbox_documents GROUP BY state');
  new Gauge({
    name: 'emr_bridge_outbox_documents',
    help: 'Documents in the outbox, by status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED).',
    labelNames: ['status'] as const,
    registers: deps.metrics ? [deps.metrics.registry] : [],
    collect() {
      this.reset();
      for (const r of countByState.all() as { state: string; n: number }[]) this.set({ status: r.state }, r.n);
    },
  });

  function nextPoll(releaseAfter: string | undefined): number {
    // Quiet hours: ask just after the release; auto-send off: on the schedule.
    return releaseAfter ? Math.max(clock.now(), Date.parse(releaseAfter)) + 1_000 : clock.now() + heldPollMs;
  }

  async function send(row: OutboxRow): Promise<void> {
    const log = logger.child({ externalId: row.external_id, documentType: row.document_type, attempt: row.attempts });
    try {
      const { resource, replayed } = await deps.serviceClient.postDocument(row.document_type, JSON.parse(row.request!) as DocumentRequest);
      // Linked before anything else. The service's patient.created for a patient it made for this document
      // carries the EMR id we sent (patientExternalId), so the processor finds the EMR record in either
      // order; if it came first it has recorded this same link, which stands. A service patient mapped to
      // another EMR record is one the service matched by phone to someone else (a family member), or a
      // duplicate from a service that ignored patientExternalId: either way, a person should look.
      if (row.emr_patient_id && resource.patientServiceId && !links.link(resource.patientServiceId, row.emr_patient_id))
        log.warn({ alert: true, patientServiceId: resource.patientServiceId, emrPatientId: row.emr_patient_id }, 'the service put this document with a patient the EMR holds as another record');
      outbox.recordOutcome(row.external_id, { state: resource.status, resource, ...(resource.status === 'HELD' ? { nextPollAt: nextPoll(resource.releaseAfter) } : {}) });
      log.info({ status: resource.status, replayed }, 'document sent to the service');
    } catch (err) {
      const d = describeError(err);
      if (isRetryable(err) && row.attempts < s.maxAttempts) {
        const retryAfter = err instanceof ServiceCallError ? (err.retryAfterMs ?? 0) : 0;
        const at = clock.now() + Math.max(backoffDelay(row.attempts, { baseMs: s.backoffBaseMs, maxMs: s.backoffMaxMs }, random), retryAfter);
        outbox.retryAt(row.external_id, at, d.code ?? d.type, d.message);
        log.warn({ code: d.code }, 'document send failed; will retry');
        return;
      }
      const code = isRetryable(err) ? 'retries_exhausted' : (d.code ?? 'rejected');
      outbox.recordOutcome(row.external_id, { state: 'FAILED', code, reason: d.message });
      log.error({ alert: true, code }, 'document could not be sent');
    }
  }

  async function follow(row: OutboxRow): Promise<void> {
    try {
      const resource = await deps.serviceClient.getDocument(row.external_id);
      if (resource && resource.status !== 'HELD') {
        outbox.recordOutcome(row.external_id, { state: resource.status, resource });
        logger.info({ externalId: row.external_id, status: resource.status }, 'held document moved on');
      } else outbox.pollAgainAt(row.external_id, nextPoll(resource?.releaseAfter && Date.parse(resource.releaseAfter) > clock.now() ? resource.releaseAfter : undefined));
    } catch (err) {
      outbox.pollAgainAt(row.external_id, clock.now() + Math.min(heldPollMs, 60_000));
      logger.warn({ externalId: row.external_id, code: describeError(err).code }, 'poll of a held document failed');
    }
  }

  /** Writes a row's status back to the EMR; false when an EMR incident means the rest should wait too. */
  async function syncToEmr(row: OutboxRow): Promise<boolean> {
    if (!row.emr_document_id || row.state === 'queued') return outbox.markSynced(row), true;
    try {
      // Repeated until it succeeds, with the outcome: the EMR record carries the service's id only where
      // this link is the mapping that stands (never two records with one id).
      if (row.emr_patient_id && row.patient_service_id && links.link(row.patient_service_id, row.emr_patient_id))
        await deps.emr.linkPatient(row.emr_patient_id, row.patient_service_id);
      await deps.emr.recordDocumentOutcome({
        documentId: row.emr_document_id,
        documentType: row.document_type,
        status: row.state,
        ...(row.status_reason ? { statusReason: row.status_reason } : {}),
        ...(row.service_id ? { serviceId: row.service_id } : {}),
        ...(row.release_after ? { releaseAfter: row.release_after } : {}),
        ...(row.sent_at ? { sentAt: row.sent_at } : {}),
        occurredAt: new Date(row.updated_at).toISOString(),
      });
      outbox.markSynced(row);
      emrGate.passed();
      return true;
    } catch (err) {
      if (isIncident(err)) {
        emrGate.failed();
        return false;
      }
      logger.warn({ externalId: row.external_id, code: describeError(err).code }, 'status write-back to the EMR failed; will retry');
      return true;
    }
  }

  /** Keeps up to WINDOW sends in flight, claiming more as each one finishes, until nothing is due. */
  async function sendDue(): Promise<number> {
    const inFlight = new Set<Promise<void>>();
    let done = 0;
    for (;;) {
      if (!stopping && inFlight.size < WINDOW) {
        for (const row of outbox.claimDue(WINDOW - inFlight.size, LEASE_MS)) {
          const p: Promise<void> = send(row).finally(() => inFlight.delete(p));
          inFlight.add(p);
          done++;
        }
      }
      if (inFlight.size === 0) return done;
      await Promise.race(inFlight);
    }
  }

  async function runOnce(): Promise<number> {
    const done = await sendDue();
    const held = outbox.heldDue();
    await Promise.all(held.map(follow));
    for (const row of emrGate.closed() ? [] : outbox.unsynced()) if (!(await syncToEmr(row))) break;
    return done + held.length;
  }

  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let task: ScheduledTask | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let scanning: Promise<unknown> = Promise.resolve();
  /** One scan of the EMR; skipped while an EMR incident is on (the dependency status has said so once). */
  async function scanOnce(): Promise<number> {
    if (emrGate.closed()) return 0;
    try {
      const added = await scanner.scanOnce();
      emrGate.passed();
      return added;
    } catch (err) {
      if (isIncident(err)) emrGate.failed();
      throw err;
    }
  }
  const scanInBackground = () => {
    scanning = scanOnce().catch((err: unknown) => {
      if (!isIncident(err)) logger.warn({ err: describeError(err) }, 'EMR document scan failed');
    });
  };

  /**
   * Takes over, at once, the sends a process that died was holding (one adapter process owns a database).
   * Sending one again is safe: the service replays its first answer for an externalId.
   */
  function recover(): number {
    const released = outbox.releaseLeases();
    if (released) logger.warn({ released }, 'took over document sends held by a process that stopped');
    return released;
  }

  function loop(): void {
    if (stopping) return;
    running = runOnce()
      .catch((err: unknown) => logger.error({ err: describeError(err) }, 'pusher pass failed'))
      .finally(() => {
        if (!stopping) timer = setTimeout(loop, 250);
      });
  }

  return {
    runOnce,
    scanOnce,
    /** Checks and queues a document pushed through the admin API or the CLI. */
    enqueue(documentType: DocumentType, input: unknown, source: 'api' | 'cli' = 'api') {
      // A caller at the other end of the API can fix and resend, so a refusal is answered, not stored.
      const checked = checkDocument(documentType, input);
      if (!checked.ok) return checked;
      const { row, created } = outbox.enqueue({ externalId: checked.request.externalId, documentType, source, request: checked.request });
      return { ok: true as const, row, created };
    },
    outbox,
    recover,
    start() {
      stopping = false;
      recover();
      task = cron.schedule(s.scanCron, scanInBackground);
      scanInBackground();
      loop();
    },
    async stop() {
      stopping = true;
      await task?.stop();
      if (timer) clearTimeout(timer);
      await Promise.all([running, scanning]);
    },
    depth: () => outbox.openCount(),
  };
}

export type Pusher = ReturnType<typeof createPusher>;
