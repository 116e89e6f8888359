// Receiver benchmark with a native load generator (issue 14): wrk, two threads, 50 connections, 10 s,
// cycling through unique, freshly signed 1.5 KB appointment.created deliveries (bench/wrk/), against, in
// one run and each in its own process:
//   - bare node:http (reads the body, answers 200): the machine's ceiling for an HTTP POST in Node;
//   - the design's floor (bench/floor-receiver.ts): Koa + @koa/router + raw-body + HMAC + SQLite group
//     commit (WAL, synchronous=FULL), 200 after the commit;
//   - the receiver app alone (bench/support/receiver-process.ts: src/'s createApp + receiver router +
//     inbox, no workers): what the adapter's own receiver code costs, without the rest of `serve`;
//   - `emr-bridge serve`, the real adapter, with a service and an EMR address that refuse connections and
//     10-minute worker polls, so the processor and the pusher sit still while the receiver is measured.
// Rounds alternate the order. Each measurement: a fresh process and data folder, a 3 s warm-up, then the
// 10 s run; the storing servers are then stopped and their inbox must hold at least as many events as
// wrk counted 2xx answers (a request cut off at the end may be committed and not counted), none twice.
// Targets (issue 14): serve >= 0.85 of the floor, >= 0.35 of bare, p99 < 25 ms, every acknowledged
// event in the inbox. wrk missing: the part fails and says how to install it (no fallback).
// BENCH_BEFORE=<another checkout, with its node_modules> adds that checkout's receiver app and `serve` to
// every round (before/after of a change, measured in one run); the floor and bare stay this checkout's.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { type Child, ROOT, startChild } from './support/child.ts';
import { type Entities, writeRequestsFile } from './wrk/requests-file.ts';
import { type ApplyingRound, applyingRound, applyingRows } from './receiver-applying.ts';
import { requireWrk, runWrk, type WrkResult } from './wrk/run-wrk.ts';

export const KEY_ID = 'key_bench_0001';
export const SECRET = 'whsec_bench_secret_0001';
export const WEBHOOK_PATH = '/webhooks/service';

// The load, shared with ./receiver-postgres.ts: a measured run, its warm-up, rounds, wrk's threads and connections.
export const SECONDS = Number(process.env.BENCH_WRK_SECONDS ?? 10);
export const WARMUP_SECONDS = 3;
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const THREADS = 2;
export const CONNECTIONS = 50;
/** Enough for a warm-up of the storing servers without a repeated delivery (they stay well under 13,000/s here). */
export const WARMUP_DELIVERIES = 40_000;
/** Bare node:http stores nothing, so repeats do not matter there: its file is capped. */
const BARE_MAX_DELIVERIES = 120_000;
/** A storing server must never see a delivery twice: at least this many, more when the warm-up was fast. */
const STORING_MIN_DELIVERIES = 150_000;
const STORING_MAX_DELIVERIES = 500_000;

export type ServerKind = 'bare' | 'floor' | 'receiver-app' | 'serve' | 'receiver-app-before' | 'serve-before';

const LABELS: Record<ServerKind, string> = {
  bare: 'bare node:http',
  floor: 'floor: Koa+raw-body+HMAC+group commit',
  'receiver-app': 'receiver app alone (src, no workers)',
  serve: 'emr-bridge serve',
  'receiver-app-before': 'BEFORE: receiver app alone',
  'serve-before': 'BEFORE: emr-bridge serve',
};

/** BENCH_RECEIVER_PARKED_ONLY=1: only the runs with the processor parked (no FHIR server), as before issue 37. */
const PARKED_ONLY = process.env.BENCH_RECEIVER_PARKED_ONLY === '1';

/** The checkout the `-before` kinds run from (BENCH_BEFORE), if any. */
const BEFORE_ROOT = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : undefined;

/** A loopback port nothing listens on (taken, then let go): the neighbours `serve` is pointed at refuse. */
async function refusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface Started {
  child: Child;
  /** The SQLite file holding inbox_events (storing servers only). */
  dbPath?: string;
}

/**
 * Starts one server in its own process, in its own data folder; `nodeArgs` go before the script (e.g. --cpu-prof);
 * `extraEnv` adds to its environment (an undefined value removes a variable this process has).
 */
export async function startServer(kind: ServerKind, dir: string, nodeArgs: string[] = [], extraEnv: Record<string, string | undefined> = {}): Promise<Started> {
  const signing = { SERVICE_KEY_ID: KEY_ID, SERVICE_SIGNING_SECRETS: SECRET, ...extraEnv };
  const before = kind.endsWith('-before');
  if (before && !BEFORE_ROOT) throw new Error(`${kind} needs BENCH_BEFORE (another checkout)`);
  const root = before ? BEFORE_ROOT! : ROOT;
  const runTs = join(root, 'bin/run-ts.js');
  switch (kind.replace(/-before$/, '') as 'bare' | 'floor' | 'receiver-app' | 'serve') {
    case 'bare':
      return { child: await startChild([...nodeArgs, runTs, join(ROOT, 'bench/support/bare-server.ts')]) };
    case 'floor': {
      const dbPath = join(dir, 'floor.db');
      return { child: await startChild([...nodeArgs, runTs, join(ROOT, 'bench/floor-receiver.ts'), dbPath], { env: signing }), dbPath };
    }
    case 'receiver-app': {
      const dbPath = join(dir, 'receiver.db');
      return { child: await startChild([...nodeArgs, runTs, join(root, 'bench/support/receiver-process.ts'), dbPath, '0'], { env: signing }), dbPath };
    }
    case 'serve': {
      const refused = `http://127.0.0.1:${await refusedPort()}`;
      const child = await startChild([...nodeArgs, join(root, 'bin/emr-bridge.js'), 'serve'], {
        // Its own folder as working directory: no .env from the checkout is read.
        cwd: dir,
        env: {
          ...signing,
          NODE_ENV: undefined,
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: dir,
          DATABASE_PATH: undefined,
          SERVICE_BASE_URL: refused,
          SERVICE_API_KEY: 'bench-service-api-key',
          FHIR_BASE_URL: `${refused}/fhir`,
          FHIR_AUTH: 'none',
          ADMIN_TOKEN: 'bench-admin-token-0001',
          ADMIN_PORT: undefined,
          ADMIN_HOST: undefined,
          PROCESSOR_POLL_MS: '600000',
          PUSHER_POLL_MS: '600000',
          LOG_LEVEL: 'info',
          ...extraEnv,
        },
      });
      return { child, dbPath: join(dir, 'emr-bridge.db') };
    }
  }
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * A fresh file of `count` deliveries, signed now, then wrk against the server (`onStart` just before wrk starts);
 * `entities`: whether they all book one appointment or each one of its own (./wrk/requests-file.ts).
 */
export async function loadOnce(
  dir: string,
  url: string,
  name: string,
  count: number,
  seconds: number,
  onStart?: () => void,
  entities: Entities = 'one',
): Promise<WrkResult> {
  const file = join(dir, `${name}.deliveries`);
  writeRequestsFile(file, count, { keyId: KEY_ID, secrets: [SECRET] }, entities);
  onStart?.();
  try {
    return await runWrk({ url: `${url}${WEBHOOK_PATH}`, requestsFile: file, seconds, threads: THREADS, connections: CONNECTIONS });
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * Deliveries for the measured run: twice what the warm-up's pace would use (a warm-up can run at half the
 * speed of the run after it on this machine), at least STORING_MIN_DELIVERIES, so none repeats.
 */
export function deliveriesFor(kind: ServerKind, warmupRps: number, seconds: number): number {
  const wanted = Math.ceil(warmupRps * seconds * 2) + 20_000;
  if (kind === 'bare') return Math.min(wanted, BARE_MAX_DELIVERIES);
  return Math.min(Math.max(wanted, STORING_MIN_DELIVERIES), STORING_MAX_DELIVERIES);
}

interface Measurement {
  kind: ServerKind;
  round: number;
  run: WrkResult;
  cpuUsPerResponse: number;
  /** Storing servers: inbox rows, and what was wrong with them (empty when every acknowledged event is there). */
  inbox?: { rows: number; acknowledged: number; sent: number; problems: string[] };
}

const sentBy = (r: WrkResult) => r.threads.reduce((n, t) => n + t.built, 0);

export interface LoadedServer {
  warm: WrkResult;
  run: WrkResult;
  /** The server's CPU (every thread) per request of the measured run, µs. */
  cpuUsPerRequest: number;
  /** Its database, for the checks made once it has stopped. */
  dbPath?: string;
}

/**
 * A server of `kind` started in `dir`, warmed up, then the measured wrk run with its CPU read, and stopped
 * (SIGTERM: an adapter exports or flushes what it holds before it exits). `label` names it should it exit badly.
 */
export async function loadServer(kind: ServerKind, dir: string, label: string, extraEnv: Record<string, string | undefined> = {}): Promise<LoadedServer> {
  const { child, dbPath } = await startServer(kind, dir, [], extraEnv);
  try {
    const warm = await loadOnce(dir, child.url, 'warmup', WARMUP_DELIVERIES, WARMUP_SECONDS);
    const pid = child.proc.pid!;
    let cpu0 = 0;
    const run = await loadOnce(dir, child.url, 'run', deliveriesFor(kind, warm.rps, SECONDS), SECONDS, () => {
      cpu0 = cpuSeconds(pid);
    });
    const cpu = cpuSeconds(pid) - cpu0;
    return { warm, run, cpuUsPerRequest: (cpu * 1e6) / Math.max(1, run.requests), ...(dbPath ? { dbPath } : {}) };
  } finally {
    const code = await child.stop('SIGTERM');
    if (code !== 0) process.stderr.write(`${label} exited with ${code}:\n${child.output().slice(-2000)}\n`);
  }
}

async function measure(kind: ServerKind, round: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), `emr-bridge-bench-wrk-${kind}-`));
  try {
    const { warm, run, cpuUsPerRequest, dbPath } = await loadServer(kind, dir, LABELS[kind]);
    const m: Measurement = { kind, round, run, cpuUsPerResponse: cpuUsPerRequest };
    if (dbPath) m.inbox = checkInbox(dbPath, [warm, run]);
    return m;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The inbox's rows and distinct eventIds, read once the server has stopped. */
export function inboxCounts(dbPath: string): { rows: number; ids: number } {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM inbox_events').get() as { rows: number; ids: number };
  } finally {
    db.close();
  }
}

/** After the server stopped: every acknowledged event is in inbox_events, none twice, none that was never sent. */
function checkInbox(dbPath: string, runs: WrkResult[]): NonNullable<Measurement['inbox']> {
  const counts = inboxCounts(dbPath);
  return { rows: counts.rows, ...inboxProblems(counts, runs) };
}

/** Against wrk's runs: every acknowledged event stored, none twice, none that was never sent. */
export function inboxProblems({ rows, ids }: { rows: number; ids: number }, runs: WrkResult[]): { acknowledged: number; sent: number; problems: string[] } {
  const acknowledged = runs.reduce((n, r) => n + r.ok, 0);
  const sent = runs.reduce((n, r) => n + sentBy(r), 0);
  const problems: string[] = [];
  if (runs.some((r) => r.threads.some((t) => t.wrapped))) problems.push('deliveries ran out and repeated (the check cannot hold)');
  if (rows < acknowledged) problems.push(`${acknowledged - rows} acknowledged events missing`);
  if (ids !== rows) problems.push(`${rows - ids} duplicate rows`);
  if (rows > sent) problems.push(`${rows - sent} more rows than deliveries sent`);
  return { acknowledged, sent, problems };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** `min–max` of `xs`, to `digits` decimals. */
export const range = (xs: number[], digits = 0) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

/**
 * What a row says of rounds of one server under wrk: its median rate, each round's, the median p99 with its range
 * and the median CPU per request; and, when the checks found nothing, that every 2xx was stored (`rows` per round).
 */
export function wrkColumns(ms: Pick<LoadedServer, 'run' | 'cpuUsPerRequest'>[]): Record<string, string> {
  return {
    'rate (median)': `${Math.round(median(ms.map((m) => m.run.rps)))} req/s`,
    runs: ms.map((m) => Math.round(m.run.rps)).join(', '),
    'p99 ms': `${median(ms.map((m) => m.run.p99ms)).toFixed(2)} (${range(
      ms.map((m) => m.run.p99ms),
      1,
    )})`,
    'CPU µs/unit': `${Math.round(median(ms.map((m) => m.cpuUsPerRequest)))} /req`,
  };
}

/** The check of rounds under wrk that found nothing wrong: the non-2xx answers, if any, and the rows each stored. */
export function everyTwoXxStored(ms: Pick<LoadedServer, 'run'>[], rows: number[]): string {
  const errors = ms.reduce((n, m) => n + m.run.non2xx, 0);
  return `${errors ? `${errors} non-2xx; ` : ''}every 2xx stored (${rows.join(', ')} rows)`;
}

export async function benchReceiverWrk(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  requireWrk();
  const kinds: ServerKind[] = ['bare', 'floor', 'receiver-app', 'serve', ...(BEFORE_ROOT ? (['receiver-app-before', 'serve-before'] as const) : [])];
  const all: Measurement[] = [];
  const applying: ApplyingRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? kinds : [...kinds].reverse();
    for (const kind of order) {
      process.stderr.write(`receiver (wrk): round ${round + 1}/${ROUNDS}, ${LABELS[kind]}…\n`);
      all.push(await measure(kind, round));
    }
    // With the processor at work beside the receiver (./receiver-applying.ts), against this round's bare.
    if (!PARKED_ONLY) applying.push(await applyingRound(round, all.find((m) => m.round === round && m.kind === 'bare')!.run.rps));
  }

  const rows: Record<string, string | number>[] = [];
  let ok = true;
  for (let round = 0; round < ROUNDS; round++) {
    const of = (kind: ServerKind) => all.find((m) => m.round === round && m.kind === kind)!;
    const bare = of('bare').run.rps;
    const floor = of('floor').run.rps;
    for (const kind of kinds) {
      const m = of(kind);
      const inbox = m.inbox ? (m.inbox.problems.length ? m.inbox.problems.join('; ') : `ok (${m.inbox.rows} ≥ ${m.inbox.acknowledged} 2xx)`) : '';
      const errors = m.run.socketErrors.connect + m.run.socketErrors.read + m.run.socketErrors.write + m.run.socketErrors.timeout;
      if (m.inbox?.problems.length || m.run.non2xx > 0) ok = false;
      rows.push({
        round: round + 1,
        server: LABELS[kind],
        'req/s': Math.round(m.run.rps),
        'p50 ms': m.run.p50ms.toFixed(2),
        'p99 ms': m.run.p99ms.toFixed(2),
        'non-2xx': m.run.non2xx + (errors ? ` (+${errors} socket errors)` : ''),
        '/bare': (m.run.rps / bare).toFixed(2),
        '/floor': (m.run.rps / floor).toFixed(2),
        'CPU µs/req': Math.round(m.cpuUsPerResponse),
        inbox,
      });
    }
  }
  // The targets, on the medians over the rounds.
  const med = (kind: ServerKind, f: (m: Measurement) => number) => median(all.filter((m) => m.kind === kind).map(f));
  const perRound = (f: (round: number) => number) => median(Array.from({ length: ROUNDS }, (_, r) => f(r)));
  const rps = (kind: ServerKind, round: number) => all.find((m) => m.round === round && m.kind === kind)!.run.rps;
  const cpuOf = (kind: ServerKind, round: number) => all.find((m) => m.round === round && m.kind === kind)!.cpuUsPerResponse;
  const toFloor = perRound((r) => rps('serve', r) / rps('floor', r));
  const toBare = perRound((r) => rps('serve', r) / rps('bare', r));
  const p99 = med('serve', (m) => m.run.p99ms);
  const targetsMet = toFloor >= 0.85 && toBare >= 0.35 && p99 < 25;
  rows.push({
    round: 'median',
    server: 'serve: targets (>= 0.85 floor, >= 0.35 bare, p99 < 25)',
    'req/s': Math.round(med('serve', (m) => m.run.rps)),
    'p50 ms': med('serve', (m) => m.run.p50ms).toFixed(2),
    'p99 ms': p99.toFixed(2),
    'non-2xx': '',
    '/bare': toBare.toFixed(2),
    '/floor': toFloor.toFixed(2),
    'CPU µs/req': `${Math.round(med('serve', (m) => m.cpuUsPerResponse))} (${perRound((r) => cpuOf('serve', r) / cpuOf('floor', r)).toFixed(2)}× floor)`,
    inbox: `${ok ? 'inbox ok' : 'INBOX/ERRORS FAIL'}; targets ${targetsMet ? 'PASS' : 'FAIL'}`,
  });
  if (PARKED_ONLY) return { rows, ok: ok && targetsMet };
  const withProcessor = applyingRows(applying);
  return { rows: [...rows, ...withProcessor.rows], ok: ok && targetsMet && withProcessor.ok };
}
