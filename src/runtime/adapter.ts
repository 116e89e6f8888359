// The composition root: builds every part of the adapter from a Config and runs it. The CLI's `serve`
// and the end-to-end tests call startAdapter; nothing else constructs parts, so a fork swaps a part here.
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { openDatabase, type Db } from '../database/open.ts';
import { acquireStoreLock } from '../database/store-lock.ts';
import { loadFhirAuthSettings, type FhirAuthSettings } from '../emr/fhir/auth/index.ts';
import { createJwksRouter } from '../emr/fhir/auth/jwks-router.ts';
import { createFhirEmr } from '../emr/fhir/index.ts';
import type { EmrPort } from '../emr/port.ts';
import type { AppDeps } from '../http/app.ts';
import { createInbox, type Inbox } from '../inbox/inbox.ts';
import type { Logger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics/metrics.ts';
import { registerAdapterOperationalMetrics } from '../metrics/operations.ts';
import { adminOpenApi } from '../openapi/admin.ts';
import { createOpenApiRouter } from '../openapi/router.ts';
import { ADAPTER_MIGRATIONS } from '../paths.ts';
import { createProcessor, createProcessorAdminRouter } from '../processor/index.ts';
import { createDocumentEventSink, createPusher, createPusherAdminRouter } from '../pusher/index.ts';
import { createReceiverRouter, WEBHOOK_PATH } from '../receiver/router.ts';
import { createServiceClient, type ServiceClient } from '../service-client/client.ts';
import { createStatusAdminRouter } from '../status/admin-router.ts';
import { createDependencyStatus, observed, type DependencyStatus } from '../status/dependency-status.ts';
import { cachedProbe, createReachability, NEIGHBOUR_PROBE, type Reachability } from '../status/readiness-probes.ts';
import { createIncidentGate } from '../work/incident-gate.ts';
import { startBundledServices, type BundledServices } from './bundled.ts';
import { checkEmrAtStart, type EmrWatch } from './emr-check.ts';
import { startListeners, type Listeners } from './listeners.ts';

export interface StartAdapterOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Replaces the EMR port built from the config (tests, benchmarks, forks); no bundled FHIR server starts then, and FHIR_AUTH is not read. */
  emr?: EmrPort;
}

export interface RunningAdapter {
  /** The adapter's own base URL (the receiver; the admin API too unless ADMIN_PORT is set). */
  url: string;
  /** Where the admin API and /metrics answer. */
  adminUrl: string;
  webhookUrl: string;
  adminToken: string;
  keyId: string;
  signingSecrets: string[];
  /** The service the adapter talks to (the bundled simulator's URL in zero-configuration mode). */
  serviceUrl: string;
  fhirBaseUrl?: string;
  /** Bundled mode only: the simulator clinic set up for the adapter. */
  clinicId?: string;
  /** Stops taking work, finishes what is in flight, closes the database and the bundled servers. */
  close(): Promise<void>;
}

/** What has been started so far, stopped in reverse order when start-up fails half-way. */
function createUndoStack() {
  const steps: (() => unknown)[] = [];
  return {
    push: (step: () => unknown) => void steps.push(step),
    async unwind() {
      for (const step of steps.splice(0).reverse()) await step();
    },
  };
}

/** The credentials the receiver and the service client read: in bundled mode they exist only once provisioned. */
interface Credentials {
  keyId: string;
  secrets: string[];
  apiKey: string;
  serviceUrl: string;
}

function buildEmr(
  opts: StartAdapterOptions,
  fhirAuth: FhirAuthSettings,
  fhirBaseUrl: string | undefined,
  parts: { clock: Clock; status: DependencyStatus; metrics: Metrics },
): EmrPort {
  const { clock, status, metrics } = parts;
  const { config, logger } = opts;
  const emr =
    opts.emr ??
    createFhirEmr({
      baseUrl: fhirBaseUrl!,
      identifierSystem: config.fhir.identifierSystem,
      timeoutMs: config.fhir.timeoutMs,
      labReportTypeCodes: config.fhir.labReportTypeCodes,
      prescriptionTypeCodes: config.fhir.prescriptionTypeCodes,
      auth: fhirAuth,
      maxContentBytes: config.fhir.maxContentBytes,
      clock,
      logger: logger.child({ component: 'emr' }),
      metrics,
    });
  return observed(emr, 'emr', status);
}

function buildWorkers(opts: StartAdapterOptions, parts: { db: Db; clock: Clock; emr: EmrPort; serviceClient: ServiceClient; metrics: Metrics }) {
  const { config, logger } = opts;
  const { db, clock, emr, serviceClient, metrics } = parts;
  // One gate for the EMR: an incident seen by either worker makes both wait.
  const emrGate = createIncidentGate(clock);
  const documentEvents = createDocumentEventSink({ db, clock, logger: logger.child({ component: 'pusher' }), emr });
  const processor = createProcessor({
    db,
    clock,
    logger: logger.child({ component: 'processor' }),
    emr,
    serviceClient,
    documentEvents,
    config,
    metrics,
    emrGate,
  });
  const pusher = createPusher({ db, clock, logger: logger.child({ component: 'pusher' }), emr, serviceClient, config, metrics, emrGate });
  return { processor, pusher };
}

function appDependencies(
  opts: StartAdapterOptions,
  parts: {
    inbox: Inbox;
    db: Db;
    clock: Clock;
    metrics: Metrics;
    status: DependencyStatus;
    credentials: Credentials;
    fhirAuth: FhirAuthSettings;
    adminToken: string;
    workers: ReturnType<typeof buildWorkers>;
    workersRunning: () => boolean;
    emr: EmrPort;
    service: Reachability;
  },
): AppDeps {
  const { config, logger } = opts;
  const { inbox, db, clock, metrics, status, credentials, fhirAuth } = parts;
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
      }),
      ...(fhirAuth.mode === 'smart' ? [createJwksRouter(fhirAuth.key.publicJwk)] : []),
    ],
    adminRouters: [
      createStatusAdminRouter({ status, database: inbox }),
      createProcessorAdminRouter({ db, clock, logger: logger.child({ component: 'admin' }) }),
      createPusherAdminRouter({ logger: logger.child({ component: 'admin' }), pusher: parts.workers.pusher, maxBodyBytes: config.adminMaxBodyBytes }),
    ],
    adminSurfaceRouters: [createOpenApiRouter(adminOpenApi)],
    adminToken: parts.adminToken,
    readiness: [
      { name: 'database', check: () => inbox.isWritable() },
      { name: 'workers', check: parts.workersRunning },
      // Reported, never deciding: while the EMR or the service is down the receiver must keep taking
      // webhooks (the inbox is durable; the workers wait and retry). Probed at most every few seconds.
      { name: 'emr', advisory: true, check: cachedProbe(() => parts.emr.ping(), { clock, ...NEIGHBOUR_PROBE }) },
      { name: 'service', advisory: true, check: cachedProbe(() => parts.service.check(), { clock, ...NEIGHBOUR_PROBE }) },
    ],
  };
}

export async function startAdapter(opts: StartAdapterOptions): Promise<RunningAdapter> {
  const { config, logger } = opts;
  const undo = createUndoStack();
  try {
    // One process per database, checked before anything else runs or writes.
    if (config.databasePath !== ':memory:') {
      const lock = acquireStoreLock(config.databasePath, opts.clock ?? systemClock);
      undo.push(() => lock.release());
    }
    // A key that cannot be used stops start-up before anything runs (the bundled EMR makes its own first).
    const bundledFhir = config.bundled.fhir && !opts.emr;
    // An EMR passed in (a fork's) signs in its own way: the FHIR_AUTH settings and their key are not read.
    let fhirAuth: FhirAuthSettings | undefined = opts.emr ? { mode: 'none' } : bundledFhir ? undefined : await loadFhirAuthSettings(config.fhir.auth);
    const bundled: BundledServices | undefined =
      config.bundled.service || bundledFhir
        ? await startBundledServices({ ...config, bundled: { service: config.bundled.service, fhir: bundledFhir } }, logger)
        : undefined;
    undo.push(() => bundled?.close());
    fhirAuth ??= await loadFhirAuthSettings(config.fhir.auth);
    const clock = opts.clock ?? bundled?.serviceClock ?? systemClock;
    const adminToken = bundled?.adminToken ?? config.adminToken!;
    const fhirBaseUrl = config.fhir.baseUrl ?? bundled?.fhirBaseUrl;
    const status = createDependencyStatus({ clock, logger });
    const metrics = createMetrics({ defaultMetrics: true });

    const emr = buildEmr(opts, fhirAuth, fhirBaseUrl, { clock, status, metrics });
    undo.push(() => emr.close());
    const emrWatch: EmrWatch = await checkEmrAtStart(emr, logger.child({ component: 'emr' }));
    undo.push(() => emrWatch.stop());

    const db = openDatabase({ path: config.databasePath, migrationsDir: ADAPTER_MIGRATIONS });
    undo.push(() => db.close());
    const inbox = createInbox({ db, clock, logger });
    undo.push(() => inbox.close());
    const credentials: Credentials = {
      keyId: config.service.keyId ?? '',
      secrets: config.service.signingSecrets,
      apiKey: config.service.apiKey ?? '',
      serviceUrl: config.service.baseUrl ?? bundled?.serviceUrl ?? '',
    };
    const serviceClient = observed(
      createServiceClient({ baseUrl: credentials.serviceUrl, apiKey: () => credentials.apiKey, timeoutMs: config.service.timeoutMs, clock }),
      'service',
      status,
    );
    undo.push(() => serviceClient.close());
    const serviceReachability = createReachability(credentials.serviceUrl, NEIGHBOUR_PROBE.timeoutMs);
    undo.push(() => serviceReachability.close());
    const workers = buildWorkers(opts, { db, clock, emr, serviceClient, metrics });
    const { processor, pusher } = workers;
    undo.push(async () => {
      await processor.stop();
      await pusher.stop();
    });
    registerAdapterOperationalMetrics({ metrics, db, clock, status, outbox: pusher.outbox, databaseWritable: () => inbox.isWritable() });

    let workersRunning = false;
    const appDeps = appDependencies(opts, {
      inbox,
      db,
      clock,
      metrics,
      status,
      credentials,
      fhirAuth,
      adminToken,
      workers,
      workersRunning: () => workersRunning,
      emr,
      service: serviceReachability,
    });
    const listeners: Listeners = await startListeners(appDeps, { port: config.port, host: config.host, ...(config.admin ? { admin: config.admin } : {}) });
    undo.push(() => listeners.close());
    const { url, adminUrl } = listeners;
    const webhookUrl = `${url}${WEBHOOK_PATH}`;

    let clinicId: string | undefined;
    if (config.bundled.service) {
      const c = await bundled!.provision(webhookUrl);
      Object.assign(credentials, { keyId: c.keyId, secrets: [...c.signingSecrets], apiKey: c.apiKey });
      bundled!.onCredentialsChanged((changed) => (credentials.secrets = [...changed.signingSecrets]));
      clinicId = c.clinicId;
    }

    processor.start();
    pusher.start();
    workersRunning = true;
    logger.info({ url, adminUrl, bundledService: config.bundled.service, bundledFhir }, 'adapter started');

    let closing: Promise<void> | undefined;
    return {
      url,
      adminUrl,
      webhookUrl,
      adminToken,
      get keyId() {
        return credentials.keyId;
      },
      get signingSecrets() {
        return [...credentials.secrets];
      },
      serviceUrl: credentials.serviceUrl,
      ...(fhirBaseUrl ? { fhirBaseUrl } : {}),
      ...(clinicId ? { clinicId } : {}),
      close() {
        closing ??= (async () => {
          workersRunning = false;
          // In reverse order of building: stop accepting (requests already inside finish), stop the workers,
          // flush the inbox, close the clients and the database, the bundled servers, the store lock last.
          await undo.unwind();
          logger.info('adapter stopped');
        })();
        return closing;
      },
    };
  } catch (err) {
    // Whatever started must not keep the process (or the store lock) held: a taken port, a refused EMR.
    await undo.unwind();
    throw err;
  }
}
