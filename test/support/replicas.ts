// Several `emr-bridge serve` processes on one PostgreSQL database behind a round-robin proxy, with the real
// simulator and the real FHIR server (SMART sign-in) in the test's process: the deployment of
// docs/replicas.md, on loopback. Replicas are child processes so that a test can SIGKILL one.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, type Child } from '../../bench/support/child.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { requestJson as json } from '../../src/http/json-request.ts';
import { silentLogger } from '../../src/logger.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { runCli } from './cli.ts';
import { createFhirReader, registerAdapterClient, smartSettings, type FhirReader } from './fhir-client.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.ts';

export const REPLICA_ADMIN = 'replica-admin-token-0001';

export interface ReplicaSet {
  sim: Awaited<ReturnType<typeof startSimulatorServer>>;
  fhir: RunningFhirServer;
  reader: FhirReader;
  proxy: RoundRobinProxy;
  database: TestDatabase;
  clinicId: string;
  /** The simulator's subscription of the proxy (GET /_sim/subscriptions/{id} says how many deliveries are queued). */
  subscriptionId: string;
  /** The replicas running now, by slot (undefined: killed or stopped). */
  replicas: (Child | undefined)[];
  start(slot: number): Promise<Child>;
  kill(slot: number): Promise<void>;
  /** SIGTERM: the replica finishes what it holds and exits. */
  stop(slot: number): Promise<void>;
  simPost<T = Record<string, unknown>>(path: string, body?: unknown): Promise<{ status: number; body: T }>;
  simGet<T = unknown>(path: string): Promise<{ status: number; body: T }>;
  fhirSearch<T = Record<string, unknown>>(query: string): Promise<T[]>;
  fhirCreate<T = { id: string }>(resource: { resourceType: string } & Record<string, unknown>): Promise<T>;
  admin<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function startReplicaSet(opts: { replicas: number; clinic?: Record<string, unknown>; settings?: Record<string, string> }): Promise<ReplicaSet> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-replicas-'));
  const database = await createTestDatabase();
  const sim = await startSimulatorServer({ logger: silentLogger() });
  const fhir = await startFhirServer({ logger: silentLogger(), dataFile: join(dir, 'fhir.jsonl'), port: 0, auth: {} });
  await registerAdapterClient(fhir, dir);
  const reader = await createFhirReader(`http://127.0.0.1:${fhir.port}`, () => fhir);
  const replicas: (Child | undefined)[] = Array.from({ length: opts.replicas }, () => undefined);
  const proxy = await startRoundRobinProxy(() => replicas.filter((r): r is Child => r !== undefined).map((r) => r.url));
  const clinicId = (await json<{ clinicId: string }>('POST', `${sim.url}/_sim/clinics`, opts.clinic ?? {})).body.clinicId;
  const key = (await json<{ key: string }>('POST', `${sim.url}/_sim/keys`, { clinicId, mode: 'live' })).body.key;
  const sub = (
    await json<{ id: string; keyId: string; signingSecret: string }>('POST', `${sim.url}/_sim/subscriptions`, {
      clinicId,
      url: `${proxy.url}/webhooks/service`,
    })
  ).body;
  const env = {
    NODE_ENV: undefined,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.url,
    DATABASE_PATH: undefined,
    SERVICE_BASE_URL: sim.url,
    SERVICE_API_KEY: key,
    SERVICE_KEY_ID: sub.keyId,
    SERVICE_SIGNING_SECRETS: sub.signingSecret,
    FHIR_BASE_URL: fhir.baseUrl,
    ...smartSettings(dir),
    ADMIN_TOKEN: REPLICA_ADMIN,
    ADMIN_PORT: undefined,
    ADMIN_HOST: undefined,
    LOG_LEVEL: 'warn',
    PROCESSOR_POLL_MS: '100',
    PROCESSOR_LEASE_MS: '3000',
    PROCESSOR_BACKOFF_BASE_MS: '100',
    PROCESSOR_BACKOFF_MAX_MS: '1000',
    PUSHER_POLL_MS: '100',
    PUSHER_LEASE_MS: '3000',
    PUSHER_BACKOFF_BASE_MS: '100',
    PUSHER_BACKOFF_MAX_MS: '1000',
    PUSHER_SCAN_CRON: '* * * * * *',
    // Half the leases at most (src/config.ts refuses more): a call never outlasts the lease it is made under.
    FHIR_TIMEOUT_MS: '1500',
    SERVICE_TIMEOUT_MS: '1500',
    ...opts.settings,
  };
  const migrated = await runCli(['migrate'], env);
  if (migrated.code !== 0) throw new Error(`migrate failed:\n${migrated.out}`);

  async function start(slot: number): Promise<Child> {
    const data = join(dir, `replica-${slot}`);
    mkdirSync(data, { recursive: true });
    const child = await startChild(['bin/emr-bridge.js', 'serve'], { env: { ...env, DATA_DIR: data }, timeoutMs: 30_000 });
    replicas[slot] = child;
    return child;
  }
  for (let slot = 0; slot < opts.replicas; slot++) await start(slot);

  const anyReplica = () => replicas.find((r) => r !== undefined)!.url;
  return {
    sim,
    fhir,
    reader,
    proxy,
    database,
    clinicId,
    subscriptionId: sub.id,
    replicas,
    start,
    async kill(slot) {
      await replicas[slot]?.stop('SIGKILL');
      replicas[slot] = undefined;
    },
    async stop(slot) {
      await replicas[slot]?.stop('SIGTERM');
      replicas[slot] = undefined;
    },
    simPost: (path, body = {}) => json('POST', `${sim.url}${path}`, body),
    simGet: (path) => json('GET', `${sim.url}${path}`),
    fhirSearch: async <T>(query: string) => ((await reader.call<{ entry?: { resource: T }[] }>('GET', query)).body.entry ?? []).map((e) => e.resource),
    fhirCreate: async <T>(resource: { resourceType: string } & Record<string, unknown>) => (await reader.call<T>('POST', resource.resourceType, resource)).body,
    admin: (method, path, body) => json(method, `${anyReplica()}/admin${path}`, body, { authorization: `Bearer ${REPLICA_ADMIN}` }),
    async close() {
      await Promise.all(replicas.map((r) => r?.stop('SIGTERM')));
      await proxy.close();
      await sim.close();
      await fhir.close();
      await reader.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
