// Zero-configuration mode: when no service is configured, start the bundled simulator in this process, and
// set up a clinic, a key and a subscription to the adapter on it (the EMR's bundled stand-in is its module's:
// src/emr/). The clinic is the demo's (./demo-clinic.ts: beside the vendor profile, one with its fixed roster).
// What was set up is kept in <DATA_DIR>/bundled.json (./bundled-state.ts) so a restart reuses it.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { EVENT_TYPES } from '../contract/events.ts';
import { requestJson } from '../http/json-request.ts';
import type { Logger } from '../logger.ts';
import { startSimulatorServer, type RunningSimulator } from '../simulator/server.ts';
import { readBundledState, withEmrAddress, writeBundledState, type BundledCredentials, type BundledEmrNote, type BundledState } from './bundled-state.ts';
import { type DemoClinic, demoClinicFor } from './demo-clinic.ts';

export interface BundledServices {
  serviceUrl?: string;
  /**
   * The bundled simulator's clock. The adapter runs on it, so that moving the simulator's clock (QA, the
   * demo) moves the whole system: webhook timestamps stay fresh, backoffs and polls fall due.
   */
  serviceClock?: Clock;
  /** ADMIN_TOKEN, or one generated once and kept when it is not set. */
  adminToken: string;
  /** Creates (or reuses) the clinic, key and subscription that point the simulator at the adapter. */
  provision(webhookUrl: string): Promise<BundledCredentials>;
  /**
   * Calls `listener` when the simulator's subscription for the adapter changes its signing secrets (QA's
   * rotate-secret, retire-secrets), after bundled.json holds them: the receiver and the CLI stay in step.
   */
  onCredentialsChanged(listener: (credentials: BundledCredentials) => void): void;
  /** Notes in bundled.json where the EMR's bundled stand-in listens, and its profile (undefined: none runs this time). */
  rememberEmr(emr: BundledEmrNote | undefined): void;
  close(): Promise<void>;
}

const nextPort = (port: number, offset: number) => (port === 0 ? 0 : port + offset);

const control = <T>(baseUrl: string, method: 'GET' | 'POST', path: string, body?: unknown) => requestJson<T>(method, `${baseUrl}${path}`, body);

interface ProvisionDeps {
  simulator: RunningSimulator;
  state: BundledState;
  demo: DemoClinic;
  save(): void;
}

/**
 * The demo's clinic and a live key on the bundled simulator: a new clinic, or for a roster the clinic that already
 * holds it (its service ids are the clinic's own: one kept from an earlier start with this profile, the file that
 * named it since set up for another).
 */
async function createClinic(deps: ProvisionDeps): Promise<{ clinicId: string; apiKey: string }> {
  const { url, simulator } = deps.simulator;
  const firstDoctor = (deps.demo.body.roster as { doctors: { serviceId: string }[] } | undefined)?.doctors[0]?.serviceId;
  const holder = firstDoctor === undefined ? undefined : simulator.store.get('doctor', firstDoctor)?.clinicId;
  const clinicId = holder ?? (await control<{ clinicId: string }>(url, 'POST', '/_sim/clinics', deps.demo.body)).body.clinicId;
  if (!clinicId) throw new Error("the bundled simulator refused the demo's clinic");
  const k = await control<{ key: string }>(url, 'POST', '/_sim/keys', { clinicId, mode: 'live' });
  return { clinicId, apiKey: k.body.key };
}

/** The secrets the simulator signs with now: a file from before secrets were followed may hold retired ones. */
function withCurrentSecrets(deps: ProvisionDeps, known: BundledCredentials): BundledCredentials {
  const secrets = deps.simulator.simulator.store.get('subscription', known.subscriptionId)?.secrets;
  if (!secrets || secrets.join() === known.signingSecrets.join()) return known;
  deps.state.credentials = { ...known, signingSecrets: [...secrets] };
  deps.save();
  return deps.state.credentials;
}

/** Creates (or reuses) the clinic, key and subscription that point the simulator at the adapter. */
async function provisionSubscription(deps: ProvisionDeps, webhookUrl: string): Promise<BundledCredentials> {
  const { simulator, state } = deps;
  // A clinic set up for the other demo is not this one's (the default demo's has no roster, the vendor one's does).
  const known = (state.credentials?.profile ?? 'default') === deps.demo.profile ? state.credentials : undefined;
  // The simulator's own database may have been reset while bundled.json stayed: then start over.
  const stillThere = known && (await control(simulator.url, 'GET', `/_sim/subscriptions/${encodeURIComponent(known.subscriptionId)}`)).status === 200;
  if (known && stillThere && known.webhookUrl === webhookUrl) return withCurrentSecrets(deps, known);
  const clinic = known && stillThere ? { clinicId: known.clinicId, apiKey: known.apiKey } : await createClinic(deps);
  const sub = await control<{ id: string; keyId: string; signingSecret: string }>(simulator.url, 'POST', '/_sim/subscriptions', {
    clinicId: clinic.clinicId,
    url: webhookUrl,
    eventTypes: [...EVENT_TYPES],
  });
  if (sub.status >= 300) throw new Error(`the bundled simulator refused the subscription (${sub.status})`);
  state.credentials = {
    ...clinic,
    subscriptionId: sub.body.id,
    keyId: sub.body.keyId,
    signingSecrets: [sub.body.signingSecret],
    webhookUrl,
    ...(deps.demo.profile === 'default' ? {} : { profile: deps.demo.profile }),
  };
  deps.save();
  return state.credentials;
}

export async function startBundledServices(config: Config, logger: Logger): Promise<BundledServices> {
  // Read first: a roster that cannot be made stops start-up before anything listens.
  const demo = demoClinicFor(config);
  const state: BundledState = readBundledState(config.dataDir);
  if (config.adminToken) delete state.adminToken;
  else state.adminToken ??= randomBytes(18).toString('base64url');
  const save = () => writeBundledState(config.dataDir, state);

  const simulator = config.bundled.service
    ? await startSimulatorServer({
        port: nextPort(config.port, 1),
        // HOST, as the adapter: in a container (0.0.0.0) the demo's simulator is reachable from outside.
        host: config.host,
        dbPath: config.simulator.databasePath ?? join(config.dataDir, 'simulator.db'),
        logger: logger.child({ component: 'simulator' }),
      })
    : undefined;
  if (simulator) state.serviceUrl = simulator.url;
  save();
  const credentialListeners: ((credentials: BundledCredentials) => void)[] = [];
  simulator?.simulator.onSecretsChanged((subscriptionId, secrets) => {
    if (state.credentials?.subscriptionId !== subscriptionId) return;
    state.credentials = { ...state.credentials, signingSecrets: [...secrets] };
    save();
    for (const listener of credentialListeners) listener(state.credentials);
  });
  const provision = (webhookUrl: string) => {
    if (!simulator) throw new Error('provisioning needs the bundled simulator');
    return provisionSubscription({ simulator, state, demo, save }, webhookUrl);
  };

  return {
    ...(simulator ? { serviceUrl: simulator.url, serviceClock: simulator.simulator.clock } : {}),
    adminToken: config.adminToken ?? state.adminToken!,
    provision,
    onCredentialsChanged: (listener) => void credentialListeners.push(listener),
    rememberEmr(emr) {
      if (withEmrAddress(state, emr)) save();
    },
    async close() {
      await simulator?.close();
    },
  };
}
