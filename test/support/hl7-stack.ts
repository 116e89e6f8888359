// The whole system on loopback with an HL7 v2 EMR, for end-to-end tests: the real simulator, the bundled HL7
// EMR over real MLLP (acknowledging, assigning MRNs and filler ids, sending its ADT/SIU feeds and documents to
// the adapter's listener), and the real adapter with EMR_PROTOCOL=hl7v2, wired by a clinic, a key and a
// subscription as test/support/stack.ts wires the FHIR stack.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { ADMIN, type ClinicSubscription, freePort, json, subscribeClinic } from './stack.ts';

/** The settings of an adapter on hl7v2 between the simulator and an HL7 EMR, quick to retry, as the tests want it. */
export function hl7AdapterSettings(w: {
  port: number;
  dir: string;
  simUrl: string;
  subscription: ClinicSubscription;
  emrUrl: string;
  listenPort: number;
}): Record<string, string> {
  return {
    PORT: String(w.port),
    DATA_DIR: w.dir,
    SERVICE_BASE_URL: w.simUrl,
    SERVICE_API_KEY: w.subscription.key,
    SERVICE_KEY_ID: w.subscription.sub.keyId,
    SERVICE_SIGNING_SECRETS: w.subscription.sub.signingSecret,
    EMR_PROTOCOL: 'hl7v2',
    HL7_SEND_URL: w.emrUrl,
    HL7_LISTEN_HOST: '127.0.0.1',
    HL7_LISTEN_PORT: String(w.listenPort),
    ADMIN_TOKEN: ADMIN,
    PROCESSOR_POLL_MS: '50',
    PROCESSOR_BACKOFF_BASE_MS: '100',
    PROCESSOR_BACKOFF_MAX_MS: '1000',
    PUSHER_BACKOFF_BASE_MS: '100',
    PUSHER_BACKOFF_MAX_MS: '1000',
  };
}

export async function startHl7Stack(opts: { clinic?: Record<string, unknown>; settings?: Record<string, string> } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-e2e-hl7-'));
  const sim = await startSimulatorServer({ logger: silentLogger() });
  const clock: Clock = { now: () => systemClock.now() + sim.simulator.clock.offsetMs() };
  const [port, listenPort] = [await freePort(), await freePort()];
  const startEmr = (at = 0) =>
    startHl7Emr({ port: at, notify: `mllp://127.0.0.1:${listenPort}`, retry: { baseMs: 50, maxMs: 500 }, clock, logger: silentLogger() });
  let emr = await startEmr();
  const emrPort = emr.port;
  const subscription = await subscribeClinic(sim.url, port, opts);
  const { clinicId } = subscription;
  const config = parseConfig({
    ...hl7AdapterSettings({ port, dir, simUrl: sim.url, subscription, emrUrl: emr.url, listenPort }),
    HL7_ACK_TIMEOUT_MS: '1000',
    SERVICE_TIMEOUT_MS: '2000',
    ...opts.settings,
  });
  const adapter: RunningAdapter = await startAdapter({ config, logger: silentLogger(), clock });
  return {
    dir,
    sim,
    /** The HL7 EMR running now. */
    get emr() {
      return emr;
    },
    /** The EMR goes down (its listener closed), as an interface engine stopped for maintenance would. */
    async stopEmr() {
      await emr.close();
    },
    /** It comes back on the same address, with nothing of what it held before (no data file). */
    async startEmr() {
      emr = await startEmr(emrPort);
    },
    clinicId,
    adapter,
    simPost: <T = Record<string, unknown>>(path: string, body: unknown = {}) => json<T>('POST', `${sim.url}${path}`, body),
    simGet: <T = unknown>(path: string) => json<T>('GET', `${sim.url}${path}`),
    admin: <T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown) =>
      json<T>(method, `${adapter.url}/admin${path}`, body, { authorization: `Bearer ${ADMIN}` }),
    async close() {
      await adapter.close();
      await emr.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Hl7Stack = Awaited<ReturnType<typeof startHl7Stack>>;
