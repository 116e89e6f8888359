// The composition root: builds every part of the adapter from a Config and runs it. The CLI's `serve`
// and the end-to-end tests call startAdapter; nothing else constructs parts, so a fork swaps a part here.
import { loadCredentialsFile } from '../access/credentials-file.ts';
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { loadFhirAuthSettings, type FhirAuthSettings } from '../emr/fhir/auth/index.ts';
import type { EmrPort } from '../emr/port.ts';
import { createInbox } from '../inbox/inbox.ts';
import type { Logger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics/metrics.ts';
import { registerAdapterOperationalMetrics } from '../metrics/operations.ts';
import { WEBHOOK_PATH } from '../receiver/router.ts';
import { holdStore, openStorage } from '../storage/index.ts';
import { createServiceClient } from '../service-client/client.ts';
import { createDependencyStatus, observed, type DependencyStatus } from '../status/dependency-status.ts';
import { createReachability, NEIGHBOUR_PROBE } from '../status/readiness-probes.ts';
import { appDependencies, buildAdminAccess, buildEmr, buildWorkers, createUndoStack, type Credentials } from './adapter-parts.ts';
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

/** Everything built before the adapter listens: the outside (bundled parts, EMR) and the inside (store, workers). */
interface Built {
  config: Config;
  logger: Logger;
  clock: Clock;
  bundled: BundledServices | undefined;
  bundledFhir: boolean;
  fhirAuth: FhirAuthSettings;
  fhirBaseUrl: string | undefined;
  adminToken: string;
  status: DependencyStatus;
  metrics: Metrics;
  emr: EmrPort;
}

type Undo = ReturnType<typeof createUndoStack>;

/** One process per SQLite file, checked before anything else runs or writes (replicas share PostgreSQL). */
function holdTheStore(opts: StartAdapterOptions, undo: Undo): void {
  const hold = holdStore(opts.config, opts.clock ?? systemClock);
  undo.push(() => hold.release());
}

/** The bundled parts that are asked for, the sign-in settings, and the EMR port, checked as start-up requires. */
async function startOutsideParts(opts: StartAdapterOptions, undo: Undo): Promise<Built> {
  const { config, logger } = opts;
  const bundledFhir = config.bundled.fhir && !opts.emr;
  // A key that cannot be used stops start-up before anything runs (the bundled EMR makes its own first). An EMR
  // passed in (a fork's) signs in its own way: the FHIR_AUTH settings and their key are not read.
  let fhirAuth: FhirAuthSettings | undefined = opts.emr ? { mode: 'none' } : bundledFhir ? undefined : await loadFhirAuthSettings(config.fhir.auth);
  const bundled =
    config.bundled.service || bundledFhir
      ? await startBundledServices({ ...config, bundled: { service: config.bundled.service, fhir: bundledFhir } }, logger)
      : undefined;
  undo.push(() => bundled?.close());
  fhirAuth ??= await loadFhirAuthSettings(config.fhir.auth);
  const clock = opts.clock ?? bundled?.serviceClock ?? systemClock;
  const fhirBaseUrl = config.fhir.baseUrl ?? bundled?.fhirBaseUrl;
  const status = createDependencyStatus({ clock, logger });
  const metrics = createMetrics({ defaultMetrics: true });
  const emr = buildEmr(opts, fhirAuth, fhirBaseUrl, { clock, status, metrics });
  undo.push(() => emr.close());
  const emrWatch: EmrWatch = await checkEmrAtStart(emr, logger.child({ component: 'emr' }));
  undo.push(() => emrWatch.stop());
  const adminToken = bundled?.adminToken ?? config.adminToken!;
  return { config, logger, clock, bundled, bundledFhir, fhirAuth, fhirBaseUrl, adminToken, status, metrics, emr };
}

/** The store, the service client and the workers (not started yet). */
async function openInsideParts(b: Built, opts: StartAdapterOptions, undo: Undo) {
  const { config, clock, logger, status, metrics, emr } = b;
  const storage = await openStorage(config, { clock, logger });
  undo.push(() => storage.close());
  const inbox = createInbox({ store: storage.inbox, clock, logger });
  undo.push(() => inbox.close());
  const credentials: Credentials = {
    keyId: config.service.keyId ?? '',
    secrets: config.service.signingSecrets,
    apiKey: config.service.apiKey ?? '',
    serviceUrl: config.service.baseUrl ?? b.bundled?.serviceUrl ?? '',
  };
  const serviceClient = observed(
    createServiceClient({ baseUrl: credentials.serviceUrl, apiKey: () => credentials.apiKey, timeoutMs: config.service.timeoutMs, clock }),
    'service',
    status,
  );
  undo.push(() => serviceClient.close());
  const service = createReachability(credentials.serviceUrl, NEIGHBOUR_PROBE.timeoutMs);
  undo.push(() => service.close());
  const workers = buildWorkers(opts, { storage, clock, emr, serviceClient, metrics });
  undo.push(async () => {
    await workers.processor.stop();
    await workers.pusher.stop();
  });
  registerAdapterOperationalMetrics({
    metrics,
    readings: storage.processor.readings,
    clock,
    status,
    outbox: workers.pusher.outbox,
    databaseWritable: () => inbox.isWritable(),
  });
  return { storage, inbox, credentials, service, workers, state: { workersRunning: false } };
}

/** Zero-configuration mode: the bundled simulator's clinic, key and subscription, pointed at this adapter. */
async function provisionBundledService(b: Built, credentials: Credentials, webhookUrl: string): Promise<string | undefined> {
  if (!b.config.bundled.service) return undefined;
  const c = await b.bundled!.provision(webhookUrl);
  Object.assign(credentials, { keyId: c.keyId, secrets: [...c.signingSecrets], apiKey: c.apiKey });
  b.bundled!.onCredentialsChanged((changed) => {
    credentials.secrets = [...changed.signingSecrets];
  });
  return c.clinicId;
}

export async function startAdapter(opts: StartAdapterOptions): Promise<RunningAdapter> {
  const { config, logger } = opts;
  // Checked before anything is written: a bad ADMIN_CREDENTIALS_FILE stops start-up here (ConfigError).
  const namedCredentials = config.adminCredentialsFile ? loadCredentialsFile(config.adminCredentialsFile) : [];
  const undo = createUndoStack();
  try {
    holdTheStore(opts, undo);
    const b = await startOutsideParts(opts, undo);
    const inside = await openInsideParts(b, opts, undo);
    const { credentials, workers, state } = inside;
    const access = buildAdminAccess(opts, { storage: inside.storage, clock: b.clock, adminToken: b.adminToken, namedCredentials });
    const appDeps = appDependencies(opts, {
      ...inside,
      access,
      clock: b.clock,
      metrics: b.metrics,
      status: b.status,
      fhirAuth: b.fhirAuth,
      adminToken: b.adminToken,
      workersRunning: () => state.workersRunning,
      emr: b.emr,
    });
    const listeners: Listeners = await startListeners(appDeps, { port: config.port, host: config.host, ...(config.admin ? { admin: config.admin } : {}) });
    undo.push(() => listeners.close());
    const { url, adminUrl } = listeners;
    const webhookUrl = `${url}${WEBHOOK_PATH}`;
    const clinicId = await provisionBundledService(b, credentials, webhookUrl);

    workers.processor.start();
    workers.pusher.start();
    state.workersRunning = true;
    logger.info({ url, adminUrl, database: inside.storage.engine, bundledService: config.bundled.service, bundledFhir: b.bundledFhir }, 'adapter started');

    let closing: Promise<void> | undefined;
    return {
      url,
      adminUrl,
      webhookUrl,
      adminToken: b.adminToken,
      get keyId() {
        return credentials.keyId;
      },
      get signingSecrets() {
        return [...credentials.secrets];
      },
      serviceUrl: credentials.serviceUrl,
      ...(b.fhirBaseUrl ? { fhirBaseUrl: b.fhirBaseUrl } : {}),
      ...(clinicId ? { clinicId } : {}),
      close() {
        closing ??= (async () => {
          state.workersRunning = false;
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
