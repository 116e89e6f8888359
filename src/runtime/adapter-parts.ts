// The parts the composition root (./adapter.ts) assembles, each built by one function from the settings:
// the EMR port, the workers, the service side, and what the HTTP app serves. A fork changes a part here.
import type Router from '@koa/router';
import type { CredentialCheck } from '../actor.ts';
import { createCredentialCheck, type NamedCredential } from '../access/credentials.ts';
import { createSignInThrottle, type SignInThrottle } from '../access/throttle.ts';
import { createAuditAdminRouter } from '../audit/admin-router.ts';
import { createAuditor } from '../audit/audit-trail.ts';
import type { Auditor } from '../audit/auditor.ts';
import { type Crosswalk, crosswalkOverStores } from '../crosswalk/crosswalk.ts';
import { createCrosswalkAdminRouter } from '../crosswalk/admin-router.ts';
import type { Clock } from '../clock.ts';
import type { EmrInbound, EmrPort } from '../emr/index.ts';
import type { AppDeps } from '../app/app.ts';
import type { Inbox } from '../inbox/inbox.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { adminOpenApi } from '../api-docs/admin.ts';
import { createOpenApiRouter } from '../openapi/router.ts';
import { createMappingsAdminRouter } from '../mappings/admin-router.ts';
import { createEventsAdminRouter, createProcessor, createProcessorAdminRouter } from '../processor/index.ts';
import { createDocumentEventSink, createPusher, createPusherAdminRouter } from '../pusher/index.ts';
import { createQuarantine } from '../receiver/quarantine.ts';
import { createQuarantineAdminRouter } from '../receiver/quarantine-admin-router.ts';
import { createReceiverRouter } from '../receiver/router.ts';
import { createQuarantineMetrics } from '../metrics/quarantine-metrics.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { createStatusAdminRouter } from '../status/admin-router.ts';
import type { AdaptiveLimit } from '../work/adaptive-limit.ts';
import type { IntakePriority } from '../work/intake-priority.ts';
import type { EmrDowntime } from '../status/emr-downtime.ts';
import { createEmrDowntimeAdminRouter } from '../status/emr-downtime-router.ts';
import type { Storage } from '../storage/index.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import { cachedProbe, NEIGHBOUR_PROBE, type Reachability } from '../status/readiness-probes.ts';
import { createEmrGate } from './emr-downtime.ts';

import type { StartAdapterOptions } from './adapter.ts';
import { buildConsoleRouter } from './console-part.ts';

/** What has been started so far, stopped in reverse order when start-up fails half-way. */
export function createUndoStack() {
  const steps: (() => unknown)[] = [];
  return {
    push: (step: () => unknown) => void steps.push(step),
    async unwind() {
      for (const step of steps.splice(0).reverse()) await step();
    },
  };
}

/** The credentials the receiver and the service client read: in bundled mode they exist only once provisioned. */
export interface Credentials {
  keyId: string;
  secrets: string[];
  apiKey: string;
  serviceUrl: string;
}

/**
 * Where a pushed EMR's port hands what the EMR sends (src/emr/port.ts, EmrInbound): an id it named goes to the
 * mappings (recorded and queued for the service, once), a document to the pusher's outbox. Each resolves once
 * committed, so the port acknowledges the EMR only then.
 */
export function connectEmrInbound(storage: Storage, workers: ReturnType<typeof buildWorkers>, module: string): EmrInbound {
  return {
    state: storage.emrState(module),
    async recordIdentified({ entityType, serviceId, emrId }, state) {
      // A mapping queued (the first time the EMR names it) goes out now, not at the outbox's next poll.
      if (await storage.processor.mappings.link(entityType, serviceId, emrId, state && { module, entries: state })) workers.processor.wake();
    },
    documentPushed: (doc) => workers.pusher.filePushed(doc),
    documentCancelled: (documentId) => workers.pusher.cancelPushed(documentId),
  };
}

export function buildWorkers(
  opts: StartAdapterOptions,
  parts: {
    storage: Storage;
    clock: Clock;
    emr: EmrPort;
    serviceClient: ServiceClient;
    metrics: Metrics;
    emrDowntime: EmrDowntime;
    /** Intake first: the processor's events in flight give way to the receiver's webhooks. */
    intakeFirst?: Pick<IntakePriority, 'limit'>;
  },
) {
  const { config, logger } = opts;
  const { storage, clock, emr, serviceClient, metrics } = parts;
  const { documents, coordination, processor: processorStores } = storage;
  // One gate for the EMR: an incident seen by either worker makes both wait, and so does a planned downtime,
  // after which one ping says whether the EMR is back before the work resumes (src/work/downtime-gate.ts).
  const emrGate = createEmrGate({
    clock,
    emr,
    downtime: parts.emrDowntime,
    logger: logger.child({ component: 'emr' }),
    resumed: () => {
      processor.wake();
      pusher.wake();
    },
  });
  const documentEvents = createDocumentEventSink({ documents, coordination, logger: logger.child({ component: 'pusher' }) });
  // The document outbox's retention runs with the processor's hourly pass.
  const processor = createProcessor({
    stores: processorStores,
    pruneFinishedDocuments: (cutoffMs) => documents.pruneFinished(cutoffMs),
    // The audit trail's retention (RETENTION_AUDIT_DAYS) too.
    pruneAudit: (cutoffMs) => storage.audit.prune(cutoffMs),
    // What the EMR module keeps to recognise a repeat (HL7 v2: the messages it took), with the eventIds.
    pruneEmr: async (cutoffMs) => (await emr.pruneBefore?.(cutoffMs)) ?? 0,
    // The quarantine's rows applied or dismissed (their bodies gone already), with the eventIds too.
    pruneQuarantine: (cutoffMs) => storage.quarantine.prune(cutoffMs),
    clock,
    logger: logger.child({ component: 'processor' }),
    emr,
    serviceClient,
    documentEvents,
    config,
    metrics,
    emrGate,
    coordination,
    ...(parts.intakeFirst ? { limit: parts.intakeFirst.limit } : {}),
  });
  const pusher = createPusher({
    documents,
    mappings: processorStores.mappings,
    coordination,
    clock,
    logger: logger.child({ component: 'pusher' }),
    emr,
    serviceClient,
    config,
    metrics,
    emrGate,
  });
  return { processor, pusher, processorStores, emrGate };
}

/**
 * Who may use the admin surface and where what they do is recorded, built once: the admin API (AppDeps) and
 * the console's sign-in and actions share the credentials, the sign-in throttle and the auditor.
 */
export interface AdminAccess {
  credentials: CredentialCheck;
  auditor: Auditor;
  signInThrottle: SignInThrottle;
}

export function buildAdminAccess(
  opts: StartAdapterOptions,
  parts: { storage: Storage; clock: Clock; adminToken: string; namedCredentials: readonly NamedCredential[] },
): AdminAccess {
  return {
    credentials: createCredentialCheck({ adminToken: parts.adminToken, credentials: parts.namedCredentials }),
    auditor: createAuditor({ store: parts.storage.audit, clock: parts.clock, logger: opts.logger }),
    signInThrottle: createSignInThrottle({ clock: parts.clock, store: parts.storage.signInFailures }),
  };
}

/** The crosswalk a person changes (the admin API, the CLI through it, the console): one module over the processor's stores. */
function buildCrosswalk(parts: { storage: Storage; workers: ReturnType<typeof buildWorkers>; emr: EmrPort; access: AdminAccess }): Crosswalk {
  return crosswalkOverStores(parts.workers.processorStores, {
    emr: parts.emr,
    auditor: parts.access.auditor,
    coordination: parts.storage.coordination,
    // The mapping goes to the service now, not at the outbox's next poll; the woken events apply now too.
    onMappingQueued: () => parts.workers.processor.wake(),
  });
}

export function appDependencies(
  opts: StartAdapterOptions,
  parts: {
    inbox: Inbox;
    clock: Clock;
    metrics: Metrics;
    status: DependencyStatus;
    credentials: Credentials;
    /** Routes the EMR module serves on the public port (FHIR with SMART sign-in: its JWKS). */
    emrRouters: Router[];
    adminToken: string;
    access: AdminAccess;
    storage: Storage;
    workers: ReturnType<typeof buildWorkers>;
    workersRunning: () => boolean;
    emr: EmrPort;
    service: Reachability;
    emrDowntime: EmrDowntime;
    emrCalls: AdaptiveLimit;
    intakeFirst?: Pick<IntakePriority, 'webhook'>;
  },
): AppDeps {
  const { config, logger } = opts;
  const { inbox, clock, metrics, status, credentials } = parts;
  // Signed webhooks over WEBHOOK_MAX_BODY_BYTES (src/receiver/quarantine-intake.ts), and what an operator does with them.
  const { quarantineBytes } = config.webhook;
  const quarantineStore = parts.storage.quarantine;
  const quarantine = createQuarantine({
    store: quarantineStore,
    maxBodyBytes: config.webhook.maxBodyBytes,
    capacityBytes: quarantineBytes,
    logger: logger.child({ component: 'admin' }),
  });
  const crosswalk = buildCrosswalk(parts);
  return {
    logger,
    metrics,
    routers: [
      createReceiverRouter({
        inbox,
        clock,
        logger: logger.child({ component: 'receiver' }),
        metrics,
        keyId: () => credentials.keyId,
        secrets: () => credentials.secrets,
        toleranceSeconds: config.webhook.toleranceSeconds,
        maxBodyBytes: config.webhook.maxBodyBytes,
        ...(parts.intakeFirst ? { arrived: parts.intakeFirst.webhook } : {}),
        quarantine: {
          store: quarantineStore,
          capacityBytes: quarantineBytes,
          metrics: createQuarantineMetrics(metrics, { usage: () => quarantineStore.usage(), capacityBytes: quarantineBytes }),
        },
      }),
      ...parts.emrRouters,
    ],
    adminRouters: [
      createStatusAdminRouter({
        status,
        database: inbox,
        emr: {
          protocol: opts.emr ? 'passed-in' : config.emr.protocol,
          documentOutcomes: parts.emr.documentOutcomes ?? 'emr',
          documents: parts.emr.documentSource ?? 'scanned',
        },
        emrCalls: parts.emrCalls,
        ...(parts.emr.links ? { emrLinks: () => parts.emr.links!() } : {}),
        waiting: () => parts.workers.processorStores.crosswalk.waiting(),
      }),
      createProcessorAdminRouter({
        deadLetters: parts.workers.processorStores.deadLetters,
        events: parts.workers.processorStores.events,
        logger: logger.child({ component: 'admin' }),
      }),
      createEventsAdminRouter({ events: parts.workers.processorStores.events, clock }),
      createMappingsAdminRouter({ lookup: parts.workers.processorStores.mappingLookup, refs: parts.emr.refs }),
      createPusherAdminRouter({ logger: logger.child({ component: 'admin' }), pusher: parts.workers.pusher, maxBodyBytes: config.adminMaxBodyBytes }),
      createAuditAdminRouter({ auditor: parts.access.auditor }),
      createEmrDowntimeAdminRouter({ downtime: parts.emrDowntime, clock }),
      createQuarantineAdminRouter({ quarantine }),
      createCrosswalkAdminRouter({ crosswalk, store: parts.workers.processorStores.crosswalk }),
    ],
    adminSurfaceRouters: [createOpenApiRouter(adminOpenApi)],
    consoleRouter: buildConsoleRouter(opts, { ...parts, quarantine, crosswalk }),
    adminToken: parts.adminToken,
    credentials: parts.access.credentials,
    auditor: parts.access.auditor,
    signInThrottle: parts.access.signInThrottle,
    readiness: [
      { name: 'database', check: () => inbox.isWritable() },
      // Running, and neither failing every pass (src/work/worker.ts): acknowledging what nothing applies is not ready.
      { name: 'workers', check: () => parts.workersRunning() && !parts.workers.processor.failing() && !parts.workers.pusher.failing() },
      // Reported, never deciding: while the EMR or the service is down the receiver must keep taking
      // webhooks (the inbox is durable; the workers wait and retry). Probed at most every few seconds.
      // Not asked at all during a planned downtime: /readyz says `downtime`, until when and why.
      {
        name: 'emr',
        advisory: true,
        check: cachedProbe(() => parts.emr.ping(), { clock, ...NEIGHBOUR_PROBE }),
        downtime: () => parts.emrDowntime.current(),
      },
      { name: 'service', advisory: true, check: cachedProbe(() => parts.service.check(), { clock, ...NEIGHBOUR_PROBE }) },
    ],
  };
}
