// The composition root: builds every part of the adapter from a Config and runs it. The CLI's `serve`
// and the end-to-end tests call startAdapter; nothing else constructs parts, so a fork swaps a part here.
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { openDatabase } from '../database/open.ts';
import { loadFhirAuthSettings, type FhirAuthSettings } from '../emr/fhir/auth/index.ts';
import { createJwksRouter } from '../emr/fhir/auth/jwks-router.ts';
import { createFhirEmr } from '../emr/fhir/index.ts';
import type { EmrPort } from '../emr/port.ts';
import type { AppDeps } from '../http/app.ts';
import { createInbox } from '../inbox/inbox.ts';
import type { Logger } from '../logger.ts';
import { createMetrics } from '../metrics/metrics.ts';

import { ADAPTER_MIGRATIONS } from '../paths.ts';
import { createProcessor, createProcessorAdminRouter } from '../processor/index.ts';
import { createDocumentEventSink, createPusher, createPusherAdminRouter } from '../pusher/index.ts';
import { createReceiverRouter, WEBHOOK_PATH } from '../receiver/router.ts';
import { createServiceClient } from '../service-client/client.ts';
import { createStatusAdminRouter } from '../status/admin-router.ts';
import { createDependencyStatus, observed } from '../status/dependency-status.ts';
import { createIncidentGate } from '../work/incident-gate.ts';
import { startBundledServices, type BundledServices } from './bundled.ts';
import { checkEmrAtStart, type EmrWatch } from './emr-check.ts';
import { startListeners, type Listeners } from './listeners.ts';

export interface StartAdapterOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Replaces the EMR port built from the config (tests, benchmarks, forks). */
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

export async function startAdapter(opts: StartAdapterOptions): Promise<RunningAdapter> {
  const { config, logger } = opts;
  // A key that cannot be used stops start-up before anything runs (the bundled EMR makes its own first).
  let fhirAuth: FhirAuthSettings | undefined = config.bundled.fhir ? undefined : await loadFhirAuthSettings(config.fhir.auth);
  const bundled: BundledServices | undefined =
    config.bundled.service || config.bundled.fhir ? await startBundledServices(config, logger) : undefined;
  fhirAuth ??= await loadFhirAuthSettings(config.fhir.auth);
  const clock = opts.clock ?? bundled?.serviceClock ?? systemClock;
  const adminToken = bundled?.adminToken ?? config.adminToken!;
  const fhirBaseUrl = config.fhir.baseUrl ?? bundled?.fhirBaseUrl;
  const status = createDependencyStatus({ clock, logger });

  const emr = observed(
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
      }),
    'emr',
    status,
  );
  let emrWatch: EmrWatch;
  try {
    emrWatch = await checkEmrAtStart(emr, logger.child({ component: 'emr' }));
  } catch (err) {
    await emr.close();
    await bundled?.close();
    throw err;
  }

  const db = openDatabase({ path: config.databasePath, migrationsDir: ADAPTER_MIGRATIONS });
  const metrics = createMetrics({ defaultMetrics: true });
  const inbox = createInbox({ db, clock, logger });

  // The receiver reads credentials through this holder: in bundled mode they exist only once the
  // subscription is made, which needs the adapter's address first.
  const credentials = {
    keyId: config.service.keyId ?? '',
    secrets: config.service.signingSecrets,
    apiKey: config.service.apiKey ?? '',
    serviceUrl: config.service.baseUrl ?? bundled?.serviceUrl ?? '',
  };
  const emrGate = createIncidentGate(clock);

  const serviceClient = observed(
    createServiceClient({ baseUrl: credentials.serviceUrl, apiKey: () => credentials.apiKey, timeoutMs: config.service.timeoutMs, clock }),
    'service',
    status,
  );

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
  const pusher = createPusher({
    db,
    clock,
    logger: logger.child({ component: 'pusher' }),
    emr,
    serviceClient,
    config,
    metrics,
    emrGate,
  });
  metrics.setInboxDepthSource(() => processor.depth());

  let workersRunning = false;
  const appDeps: AppDeps = {
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
      createStatusAdminRouter({ status, databaseWritable: () => inbox.isWritable() }),
      createProcessorAdminRouter({ db, clock, logger: logger.child({ component: 'admin' }) }),
      createPusherAdminRouter({ logger: logger.child({ component: 'admin' }), pusher }),
    ],
    adminToken,
    readiness: [
      { name: 'database', check: () => inbox.isWritable() },
      { name: 'workers', check: () => workersRunning },
    ],
  };

  let listeners: Listeners;
  try {
    listeners = await startListeners(appDeps, { port: config.port, host: config.host, ...(config.admin ? { admin: config.admin } : {}) });
  } catch (err) {
    // A taken port must not leave the database or the bundled servers holding the process open.
    emrWatch.stop();
    await serviceClient.close();
    await emr.close();
    db.close();
    await bundled?.close();
    throw err;
  }
  const { url, adminUrl } = listeners;
  const webhookUrl = `${url}${WEBHOOK_PATH}`;

  let clinicId: string | undefined;
  if (config.bundled.service) {
    const c = await bundled!.provision(webhookUrl);
    Object.assign(credentials, { keyId: c.keyId, secrets: [c.signingSecret], apiKey: c.apiKey });
    clinicId = c.clinicId;
  }

  processor.start();
  pusher.start();
  workersRunning = true;
  logger.info({ url, bundledService: config.bundled.service, bundledFhir: config.bundled.fhir }, 'adapter started');

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
        emrWatch.stop();
        // Stop accepting first; requests already inside finish and their batch commits.
        await listeners.close();
        await inbox.close();
        await processor.stop();
        await pusher.stop();
        await serviceClient.close();
        await emr.close();
        db.close();
        await bundled?.close();
        logger.info('adapter stopped');
      })();
      return closing;
    },
  };
}
