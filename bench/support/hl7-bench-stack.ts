// The HL7 benchmark's system (../hl7.ts), each part a process of its own as they run in production: the simulator
// (`emr-bridge simulator`), the bundled HL7 EMR (./hl7-emr-process.ts, driven over IPC) and the adapter
// (`emr-bridge serve`, EMR_PROTOCOL=hl7v2, on its SQLite file), wired by a clinic without quiet hours and a
// live key. Webhooks are signed here and posted straight to the adapter (no simulator delivery in the way);
// the patients and appointments they name are made on the simulator first, so the mappings the adapter posts
// back are the ones a real service takes.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { requestJson } from '../../src/http/json-request.ts';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';
import { type Child, ROOT, startChild } from './child.ts';
import type { EmrCounts, EmrRequest } from './hl7-emr-process.ts';

const KEY_ID = 'key_bench_hl7_0001';
const SECRET = 'whsec_bench_hl7_secret_0001';
const ADMIN_TOKEN = 'bench-hl7-admin-token-0001';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'silent';
/** Connections the HL7 EMR sends its notifications and documents over (`emr-bridge hl7-emr --notify-connections`). */
const NOTIFY_CONNECTIONS = process.env.BENCH_HL7_NOTIFY_CONNECTIONS ?? '1';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process, in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface EmrChild {
  url: string;
  pid: number;
  counts(): Promise<EmrCounts>;
  /** Queues the documents for the notify target (MDM^T02); resolves once they are queued. */
  file(documentIds: string[], patientServiceId: string, bytes: number, variants: number): Promise<void>;
  stop(): Promise<void>;
}

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * The bundled HL7 EMR in a process of its own; `notify` is where its feeds and documents go (none: nowhere), over
 * BENCH_HL7_NOTIFY_CONNECTIONS connections (default 1).
 */
export function startEmrChild(notify?: string): Promise<EmrChild> {
  const proc: ChildProcess = spawn(process.execPath, ['bin/run-ts.js', 'bench/support/hl7-emr-process.ts', ...(notify ? [notify, NOTIFY_CONNECTIONS] : [])], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  let next = 0;
  const ask = (req: Distribute<EmrRequest>): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (m) => (typeof m.error === 'string' ? reject(new Error(`HL7 EMR: ${m.error}`)) : resolve(m)));
      proc.send({ ...req, id });
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error('the HL7 EMR did not start in time'));
    }, 20_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the HL7 EMR exited (${code}) before listening`));
    });
    proc.on('message', (m: Record<string, unknown>) => {
      if (typeof m.listening === 'string') {
        clearTimeout(timer);
        resolve({
          url: m.listening,
          pid: proc.pid!,
          counts: async () => (await ask({ cmd: 'counts' })) as unknown as EmrCounts,
          async file(documentIds, patientServiceId, bytes, variants) {
            await ask({ cmd: 'file', documentIds, patientServiceId, bytes, variants });
          },
          async stop() {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
            await exited;
          },
        });
        return;
      }
      const id = m.id as number;
      waiting.get(id)?.(m);
      waiting.delete(id);
    });
  });
}

export interface Hl7BenchStack {
  dir: string;
  sim: Child;
  emr: EmrChild;
  adapter: Child;
  clinicId: string;
  /** Makes `count` appointments (each with a patient of its own) on the simulator; answers their webhook bodies. */
  bookAppointments(count: number): Promise<Record<string, unknown>[]>;
  /** Posts the bodies as signed webhooks to the adapter, `concurrency` at a time; throws on any non-2xx. */
  postWebhooks(bodies: Record<string, unknown>[], concurrency?: number): Promise<void>;
  /**
   * The adapter's outbox by status, read from its SQLite file by a read-only connection of this process (its
   * /metrics would say the same, but a scrape is work for the adapter's event loop, and memory).
   */
  outbox(): Record<string, number>;
  close(): Promise<void>;
}

export async function startHl7BenchStack(opts: { simulatorDb?: boolean; settings?: Record<string, string> } = {}): Promise<Hl7BenchStack> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-hl7-'));
  const closers: (() => Promise<unknown>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const sim = await startChild(['bin/emr-bridge.js', 'simulator', '--port', '0', ...(opts.simulatorDb ? ['--db', join(dir, 'simulator.db')] : [])], {
      env: { LOG_LEVEL, SIMULATOR_DATABASE_PATH: '' },
    });
    closers.push(() => sim.stop());
    const clinicId = (
      await requestJson<{ clinicId: string }>('POST', `${sim.url}/_sim/clinics`, { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } })
    ).body.clinicId;
    const key = (await requestJson<{ key: string }>('POST', `${sim.url}/_sim/keys`, { clinicId, mode: 'live' })).body.key;
    const listenPort = await freePort();
    const emr = await startEmrChild(`mllp://127.0.0.1:${listenPort}`);
    closers.push(() => emr.stop());
    const adapter = await startChild(['bin/emr-bridge.js', 'serve'], {
      env: {
        LOG_LEVEL,
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: join(dir, 'adapter'),
        SERVICE_BASE_URL: sim.url,
        SERVICE_API_KEY: key,
        SERVICE_KEY_ID: KEY_ID,
        SERVICE_SIGNING_SECRETS: SECRET,
        EMR_PROTOCOL: 'hl7v2',
        HL7_SEND_URL: emr.url,
        HL7_LISTEN_HOST: '127.0.0.1',
        HL7_LISTEN_PORT: String(listenPort),
        ADMIN_TOKEN,
        ...opts.settings,
      },
      timeoutMs: 60_000,
    });
    closers.push(() => adapter.stop());
    let db: Database.Database | undefined;
    closers.push(async () => db?.close());
    const countByState = () => {
      db ??= new Database(join(dir, 'adapter', 'emr-bridge.db'), { readonly: true, fileMustExist: true });
      return db.prepare('SELECT state, count(*) AS n FROM outbox_documents GROUP BY state').all() as { state: string; n: number }[];
    };
    let doctor: string | undefined;
    let location: string | undefined;
    return {
      dir,
      sim,
      emr,
      adapter,
      clinicId,
      async bookAppointments(count) {
        const bodies: Record<string, unknown>[] = [];
        for (let i = 0; i < count; i++) {
          const made = (
            await requestJson<Record<string, unknown> & { doctor: { serviceId: string }; location: { serviceId: string } }>(
              'POST',
              `${sim.url}/_sim/appointments`,
              {
                clinicId,
                ...(doctor ? { doctor: { serviceId: doctor } } : {}),
                ...(location ? { location: { serviceId: location } } : {}),
              },
            )
          ).body;
          doctor = made.doctor.serviceId;
          location = made.location.serviceId;
          const { serviceId: _, ...snapshot } = made;
          bodies.push({ eventId: randomUUID(), eventType: 'appointment.created', occurredAt: new Date().toISOString(), clinicId, ...snapshot });
        }
        return bodies;
      },
      async postWebhooks(bodies, concurrency = 8) {
        const pool = new Pool(adapter.url, { connections: concurrency });
        let i = 0;
        try {
          await Promise.all(
            Array.from({ length: concurrency }, async () => {
              while (i < bodies.length) {
                const event = bodies[i++]!;
                const body = Buffer.from(JSON.stringify(event));
                const headers = signedWebhookHeaders({
                  keyId: KEY_ID,
                  secrets: [SECRET],
                  timestamp: Math.floor(Date.now() / 1000),
                  body,
                  eventId: String(event.eventId),
                  eventType: String(event.eventType),
                  attempt: 1,
                });
                const res = await pool.request({ path: '/webhooks/service', method: 'POST', headers, body });
                const text = await res.body.text();
                if (res.statusCode >= 300) throw new Error(`webhook answered ${res.statusCode}: ${text}`);
              }
            }),
          );
        } finally {
          await pool.close();
        }
      },
      outbox: () => Object.fromEntries(countByState().map((r) => [r.state, r.n])),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
