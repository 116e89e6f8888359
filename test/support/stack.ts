// The whole system on loopback for end-to-end tests: the real simulator, the real FHIR server with SMART
// Backend Services sign-in on, and the real adapter (startAdapter) signing in with a key registered
// there, wired by a clinic, a key and a subscription. The adapter's clock follows the simulator's, so
// moving the simulator's clock keeps webhook timestamps fresh for the receiver.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createFhirReader, registerAdapterClient, smartSettings, type FhirReader } from './fhir-client.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { requestJson as json } from '../../src/http/json-request.ts';
import { silentLogger, type Logger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';

export const ADMIN = 'e2e-admin-token-000001';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A PORT whose PORT+1 and PORT+2 are free too, held for a moment each (zero-configuration mode puts the simulator
 * and the FHIR server there): freePort() alone left them to chance, and a busy run found one taken (EADDRINUSE).
 */
export async function threeFreePorts(): Promise<number> {
  const listen = (port: number) =>
    new Promise<Server | undefined>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(undefined));
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  const close = (s: Server) => new Promise<void>((r) => s.close(() => r()));
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = (await listen(0))!;
    const port = (first.address() as { port: number }).port;
    const rest = [await listen(port + 1), await listen(port + 2)];
    await Promise.all([first, ...rest].filter((s): s is Server => s !== undefined).map(close));
    if (rest.every(Boolean)) return port;
  }
  throw new Error('no three consecutive free ports');
}

/** JSON calls to the simulator, the adapter and the FHIR server. */
export { json };

/** A subscriber's credentials on the simulator: its clinic, a key, and a subscription to an adapter's webhook. */
export interface ClinicSubscription {
  clinicId: string;
  key: string;
  sub: { id: string; keyId: string; signingSecret: string };
}

/** A clinic (`clinic`: its settings), a key and a subscription to the adapter that will listen on `port`. */
export async function subscribeClinic(
  simUrl: string,
  port: number,
  opts: { clinic?: Record<string, unknown>; eventTypes?: string[]; keyMode?: 'live' | 'sandbox' } = {},
): Promise<ClinicSubscription> {
  const clinicId = (await json<{ clinicId: string }>('POST', `${simUrl}/_sim/clinics`, opts.clinic ?? {})).body.clinicId;
  const key = (await json<{ key: string }>('POST', `${simUrl}/_sim/keys`, { clinicId, mode: opts.keyMode ?? 'live' })).body.key;
  const sub = (
    await json<ClinicSubscription['sub']>('POST', `${simUrl}/_sim/subscriptions`, {
      clinicId,
      url: `http://127.0.0.1:${port}/webhooks/service`,
      ...(opts.eventTypes ? { eventTypes: opts.eventTypes } : {}),
    })
  ).body;
  return { clinicId, key, sub };
}

export async function startStack(
  opts: {
    clinic?: Record<string, unknown>;
    eventTypes?: string[];
    settings?: Record<string, string>;
    keyMode?: 'live' | 'sandbox';
    logger?: Logger;
    /** The bundled FHIR server's profile: 'vendor' is an EMR that owns its records (fhir-server --profile vendor). */
    fhirProfile?: 'default' | 'vendor';
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-e2e-'));
  const sim = await startSimulatorServer({ logger: silentLogger() });
  const fhirFile = join(dir, 'fhir.jsonl');
  const startFhirOn = async (port = 0) => {
    const server = await startFhirServer({
      logger: silentLogger(),
      dataFile: fhirFile,
      port,
      auth: {},
      ...(opts.fhirProfile ? { profile: opts.fhirProfile } : {}),
    });
    await registerAdapterClient(server, dir);
    return server;
  };
  let fhir: RunningFhirServer | undefined = await startFhirOn();
  const fhirPort = fhir.port;
  const reader: FhirReader = await createFhirReader(`http://127.0.0.1:${fhirPort}`, () => fhir);
  const port = await freePort();
  const { clinicId, key, sub } = await subscribeClinic(sim.url, port, opts);
  const clock: Clock = { now: () => systemClock.now() + sim.simulator.clock.offsetMs() };
  const config = parseConfig({
    PORT: String(port),
    DATA_DIR: dir,
    SERVICE_BASE_URL: sim.url,
    SERVICE_API_KEY: key,
    SERVICE_KEY_ID: sub.keyId,
    SERVICE_SIGNING_SECRETS: sub.signingSecret,
    FHIR_BASE_URL: fhir.baseUrl,
    ...smartSettings(dir),
    ADMIN_TOKEN: ADMIN,
    PROCESSOR_POLL_MS: '50',
    PROCESSOR_BACKOFF_BASE_MS: '100',
    PROCESSOR_BACKOFF_MAX_MS: '1000',
    PUSHER_BACKOFF_BASE_MS: '100',
    PUSHER_BACKOFF_MAX_MS: '1000',
    PUSHER_SCAN_CRON: '* * * * * *',
    FHIR_TIMEOUT_MS: '2000',
    SERVICE_TIMEOUT_MS: '2000',
    ...opts.settings,
  });
  const adapter: RunningAdapter = await startAdapter({ config, logger: opts.logger ?? silentLogger(), clock });
  return {
    dir,
    sim,
    clinicId,
    key,
    sub,
    adapter,
    fhirUrl: () => `http://127.0.0.1:${fhirPort}`,
    /** The FHIR server running now: its sign-in can be changed as a hospital's IT would (clients, scopes). */
    fhirServer: () => fhir!,
    simPost: <T = Record<string, unknown>>(path: string, body: unknown = {}) => json<T>('POST', `${sim.url}${path}`, body),
    simGet: <T = unknown>(path: string) => json<T>('GET', `${sim.url}${path}`),
    /** Searches the FHIR server as a person at the hospital would, signed in as a client of its own. */
    fhirSearch: async <T = Record<string, unknown>>(query: string) =>
      ((await reader.call<{ entry?: { resource: T }[] }>('GET', query)).body.entry ?? []).map((e) => e.resource),
    /** Creates a resource in the EMR (a clerk's work), signed in likewise; answers the created resource. */
    fhirCreate: async <T = { id: string }>(resource: { resourceType: string } & Record<string, unknown>) =>
      (await reader.call<T>('POST', resource.resourceType, resource)).body,
    admin: <T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) =>
      json<T>(method, `${adapter.url}/admin${path}`, body, { authorization: `Bearer ${ADMIN}` }),
    async stopFhir() {
      await fhir?.close();
      fhir = undefined;
    },
    async startFhir() {
      fhir = await startFhirOn(fhirPort);
    },
    async close() {
      await adapter.close();
      await sim.close();
      await fhir?.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;
