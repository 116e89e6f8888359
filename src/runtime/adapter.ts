// The composition root: builds every part of the adapter from a Config and runs it. The CLI's `serve`
// and the end-to-end tests call startAdapter; nothing else constructs parts, so a fork swaps a part here.
import { loadSealer } from '../sealing/load.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { loadCredentialsFile } from '../access/credentials-file.ts';
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { type EmrPort, type EmrSummary, emrModuleFor, LOCAL_PORT_METHODS, type RunningEmr } from '../emr/index.ts';
import { createInbox } from '../inbox/inbox.ts';
import type { Logger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics/metrics.ts';
import { registerAdapterOperationalMetrics } from './operational-metrics.ts';
import { registerWaitingMetrics } from '../metrics/waiting-metrics.ts';
import { WEBHOOK_PATH } from '../receiver/router.ts';
import { holdStore, openStorage } from '../storage/index.ts';
import { createServiceClient } from '../service-client/client.ts';
import { startTracing } from '../tracing/provider.ts';
import { createDependencyStatus, observed, type DependencyStatus } from '../status/dependency-status.ts';
import { createAdaptiveLimit, type AdaptiveLimit } from '../work/adaptive-limit.ts';
import { createIntakePriority, type IntakePriority, timerLoopDelay, tickEvery } from '../work/intake-priority.ts';
import { registerEmrCallsMetrics } from '../metrics/emr-calls-metrics.ts';
import { registerIntakePriorityMetrics } from '../metrics/intake-priority-metrics.ts';
import { createEmrDowntime, type EmrDowntime, registerEmrDowntimeMetric } from '../status/emr-downtime.ts';
import { createReachability, NEIGHBOUR_PROBE } from '../status/readiness-probes.ts';
import { appDependencies, buildAdminAccess, buildWorkers, connectEmrInbound, createUndoStack, type Credentials } from './adapter-parts.ts';
import { startBundledServices, type BundledServices } from './bundled.ts';
import { type BundledEmrNote, rememberBundledEmr } from './bundled-state.ts';
import { checkEmrAtStart, type EmrWatch } from './emr-check.ts';
import { withoutCallsDuringDowntime } from './emr-downtime.ts';
import { startListeners, type Listeners } from './listeners.ts';

export interface StartAdapterOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Replaces the EMR port built from the config (tests, benchmarks, forks); no bundled EMR starts then, and the EMR module's settings are not read. */
  emr?: EmrPort;
  /** Replaces the sealer the data key settings make (tests); by default the keys are read at start. */
  sealer?: Sealer;
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
  /** The EMR as the banner shows it (its kind, address and sign-in); absent for an EMR passed in. */
  emr?: EmrSummary;
  /** Where the EMR is (FHIR: its base URL), the bundled stand-in's in zero-configuration mode. */
  emrAddress?: string;
  /** Bundled mode only: the simulator clinic set up for the adapter. */
  clinicId?: string;
  /** The data key new patient data is sealed under; undefined when it is written in clear (DATA_ENCRYPTION=off). */
  sealedUnder?: string;
  /** Stops taking work, finishes what is in flight, closes the database and the bundled servers. */
  close(): Promise<void>;
}

/** Everything built before the adapter listens: the outside (bundled parts, EMR) and the inside (store, workers). */
interface Built {
  config: Config;
  logger: Logger;
  clock: Clock;
  bundled: BundledServices | undefined;
  /** The EMR module's stand-in runs (zero-configuration mode, or its address says `bundled`). */
  bundledEmr: boolean;
  running: RunningEmr;
  adminToken: string;
  status: DependencyStatus;
  metrics: Metrics;
  emr: EmrPort;
  /** Seals patient data at rest (docs/data-at-rest.md), its keys read before anything is written. */
  sealer: Sealer;
  /** Whether the EMR is in planned downtime (EMR_DOWNTIME, or set by an operator once the store is attached). */
  emrDowntime: EmrDowntime;
  /** The EMR as start-up messages name it. */
  where: string;
  /** EMR calls in flight at once (EMR_MAX_CONCURRENCY, lowered while the EMR pushes back). */
  emrCalls: AdaptiveLimit;
}

type Undo = ReturnType<typeof createUndoStack>;

/** One process per SQLite file, checked before anything else runs or writes (replicas share PostgreSQL). */
function holdTheStore(opts: StartAdapterOptions, undo: Undo): void {
  const hold = holdStore(opts.config, opts.clock ?? systemClock);
  undo.push(() => hold.release());
}

/** An EMR port passed in (a fork's, a test's): no module, no routes, no stand-in. */
const passedIn = (port: EmrPort): RunningEmr => ({
  port,
  routers: [],
  summary: { title: 'EMR', address: '', detail: 'passed in' },
  close: () => port.close(),
});

/** The bundled simulator when asked for, the EMR module (its stand-in too), and the EMR checked as start-up requires. */
async function startOutsideParts(opts: StartAdapterOptions, undo: Undo): Promise<Built> {
  const { config, logger } = opts;
  const module = emrModuleFor(config.emr);
  const bundledEmr = config.emr.bundled && !opts.emr;
  // What the EMR's settings point at (a key file) is checked before anything runs; a passed-in EMR signs in its own way.
  const prepared = opts.emr ? undefined : await module.prepare(config.emr.settings, bundledEmr);
  // The data keys too (a file, or a command's output; generated under DATA_DIR in zero-configuration mode).
  const sealer = opts.sealer ?? (await loadSealer(config.dataKeys));
  const bundled = config.bundled.service ? await startBundledServices(config, logger) : undefined;
  undo.push(() => bundled?.close());
  const clock = opts.clock ?? bundled?.serviceClock ?? systemClock;
  const emrDowntime = createEmrDowntime({ clock, logger, windows: config.emrDowntime });
  const status = createDependencyStatus({ clock, logger, downtime: (name) => (name === 'emr' ? emrDowntime.current() : undefined) });
  const metrics = createMetrics({ defaultMetrics: true });
  const emrCalls = createAdaptiveLimit({ max: config.emrMaxConcurrency, clock });
  registerEmrCallsMetrics(metrics.registry, emrCalls);
  const running = opts.emr
    ? passedIn(opts.emr)
    : await module.start({
        settings: config.emr.settings,
        bundled: bundledEmr,
        prepared,
        host: { host: config.host, port: config.port, dataDir: config.dataDir, logger },
        // A stand-in stamps what it keeps on the simulator's clock, as the adapter runs on it.
        clock: bundled?.serviceClock ?? clock,
        metrics,
        emrCalls,
      });
  undo.push(() => running.close());
  const { address, standInProfile } = running.summary;
  rememberEmrAddress(config, bundled, bundledEmr ? { address, ...(standInProfile ? { profile: standInProfile } : {}) } : undefined);
  // No call reaches the EMR during a planned downtime, and none of those it was spared counts against it.
  const emr = withoutCallsDuringDowntime(observed(running.port, 'emr', status, LOCAL_PORT_METHODS), emrDowntime);
  registerEmrDowntimeMetric(metrics.registry, emrDowntime);
  const where = opts.emr ? 'the EMR' : `the ${running.summary.title} at ${running.summary.address}`;
  const adminToken = bundled?.adminToken ?? config.adminToken!;
  return { config, logger, clock, bundled, bundledEmr, running, adminToken, status, metrics, emr, sealer, emrDowntime, where, emrCalls };
}

/** bundled.json says where the EMR's stand-in listens (the CLI reads it), or that none runs this time. */
function rememberEmrAddress(config: StartAdapterOptions['config'], bundled: BundledServices | undefined, emr: BundledEmrNote | undefined): void {
  if (bundled) bundled.rememberEmr(emr);
  else rememberBundledEmr(config.dataDir, emr);
}

/** The store, the service client and the workers (not started yet). */
async function openInsideParts(b: Built, opts: StartAdapterOptions, undo: Undo) {
  const { config, clock, logger, status, metrics, emr } = b;
  const storage = await openStorage(config, { clock, logger, sealer: b.sealer });
  undo.push(() => storage.close());
  const inbox = createInbox({ store: storage.inbox, clock, logger, sealer: b.sealer });
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
  const intakeFirst = startIntakePriority(config, undo);
  registerIntakePriorityMetrics(metrics.registry, intakeFirst);
  const workers = buildWorkers(opts, { storage, clock, emr, serviceClient, metrics, emrDowntime: b.emrDowntime, intakeFirst });
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
  registerWaitingMetrics(metrics, { clock, waiting: () => storage.processor.crosswalk.waiting() });
  return { storage, inbox, credentials, service, workers, intakeFirst, state: { workersRunning: false } };
}

/** Intake first (src/work/intake-priority.ts): the processor's events in flight follow the event loop's delay while webhooks queue. */
function startIntakePriority(config: Config, undo: Undo): IntakePriority {
  const delays = timerLoopDelay();
  const priority = createIntakePriority({ max: config.processor.concurrency, delays, now: () => performance.now() });
  const stopTicking = tickEvery(priority);
  undo.push(() => {
    stopTicking();
    delays.stop();
  });
  return priority;
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
    // Traces first, and shut down last: every span of the adapter's life is made, and the last exported on close.
    if (config.tracing) {
      const tracing = startTracing(config.tracing, logger.child({ component: 'tracing' }));
      undo.push(() => tracing.shutdown());
    }
    holdTheStore(opts, undo);
    const b = await startOutsideParts(opts, undo);
    const inside = await openInsideParts(b, opts, undo);
    const { credentials, workers, state } = inside;
    // The planned downtime operators set is in the store, which every replica reads again every few seconds; the
    // EMR is checked only then, so that none in force (a restart during one) is broken by the start-up check.
    await b.emrDowntime.attachStore(inside.storage.emrDowntime);
    undo.push(b.emrDowntime.watch());
    const emrWatch: EmrWatch = await checkEmrAtStart(b.emr, logger.child({ component: 'emr' }), b.where, b.emrDowntime);
    undo.push(() => emrWatch.stop());
    const access = buildAdminAccess(opts, { storage: inside.storage, clock: b.clock, adminToken: b.adminToken, namedCredentials });
    const appDeps = appDependencies(opts, {
      ...inside,
      access,
      clock: b.clock,
      metrics: b.metrics,
      status: b.status,
      emrRouters: b.running.routers,
      adminToken: b.adminToken,
      workersRunning: () => state.workersRunning,
      emr: b.emr,
      emrDowntime: b.emrDowntime,
      emrCalls: b.emrCalls,
    });
    const listeners: Listeners = await startListeners(appDeps, { port: config.port, host: config.host, ...(config.admin ? { admin: config.admin } : {}) });
    undo.push(() => listeners.close());
    const { url, adminUrl } = listeners;
    const webhookUrl = `${url}${WEBHOOK_PATH}`;
    const clinicId = await provisionBundledService(b, credentials, webhookUrl);

    await b.emr.start?.(connectEmrInbound(inside.storage, workers, opts.emr ? 'passed-in' : config.emr.protocol));
    workers.processor.start();
    workers.pusher.start();
    state.workersRunning = true;
    logger.info(
      { url, adminUrl, database: inside.storage.engine, bundledService: config.bundled.service, emr: config.emr.protocol, bundledEmr: b.bundledEmr },
      'adapter started',
    );

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
      ...(opts.emr ? {} : { emr: b.running.summary, emrAddress: b.running.summary.address }),
      ...(clinicId ? { clinicId } : {}),
      ...(b.sealer.currentKid ? { sealedUnder: b.sealer.currentKid } : {}),
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
