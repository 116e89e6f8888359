// The receiver benchmark's runs with the processor at work (issue 37): what `serve` acknowledges while it also
// applies what it acknowledged, and how fast it applies a backlog with intake parked, while intake runs, and
// once intake stops. Each run is `emr-bridge serve` with the bundled FHIR server (`emr-bridge fhir-server`) and a
// stand-in for the service's mapping API (bare node:http: 200 to every PUT) as processes of their own, wrk
// sending unique signed 1.5 KB appointment.created deliveries, each an appointment and a patient of its own, so
// that every delivery is work for the processor (./wrk/requests-file.ts, `distinct`). Per round:
//   - parked: `serve` with neighbours that refuse connections and 10-minute polls (the receiver alone, as in
//     ./receiver-wrk.ts), under wrk; then `serve` started again on that data folder, pointed at a fresh FHIR
//     server: the processor's drain rate with intake parked (the baseline), over DRAIN_SECONDS after a warm-up;
//   - applying: `serve` pointed at a fresh FHIR server from the start, under wrk (the warm-up's deliveries are
//     already a backlog when the measured run starts): the receiver's figures, the drain rate while intake runs,
//     and over DRAIN_SECONDS after wrk stops.
// Progress is read from the adapter's SQLite file by a read-only connection of this process (a /metrics scrape
// would be work for the event loop measured). After each `serve` stops (SIGTERM): every 2xx in the inbox, none
// twice; every appointment the processor marked applied in the FHIR server once, and none it did not mark.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Child, startChild } from './support/child.ts';
import {
  cpuSeconds,
  deliveriesFor,
  inboxCounts,
  inboxProblems,
  loadOnce,
  median,
  SECONDS,
  startServer,
  WARMUP_DELIVERIES,
  WARMUP_SECONDS,
} from './receiver-wrk.ts';
import type { WrkResult } from './wrk/run-wrk.ts';

/** How long a drain rate is measured: once intake stopped, and with intake parked (after DRAIN_WARMUP_SECONDS). */
const DRAIN_SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 20);
/** The parked backlog's first seconds are the process's warm-up (JIT, connections): not in its rate. */
const DRAIN_WARMUP_SECONDS = 3;
const LOOK_EVERY_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The neighbours an applying `serve` works against: the bundled FHIR server and a service that answers 200. */
export interface Neighbours {
  fhir: Child;
  service: Child;
  stop(): Promise<void>;
}

export async function startNeighbours(): Promise<Neighbours> {
  const fhir = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0'], { env: { LOG_LEVEL: 'silent' }, timeoutMs: 60_000 });
  const service = await startChild(['bin/run-ts.js', 'bench/support/bare-server.ts']).catch(async (err) => {
    await fhir.stop();
    throw err;
  });
  return {
    fhir,
    service,
    async stop() {
      await Promise.all([fhir.stop(), service.stop()]);
    },
  };
}

/** `serve`'s settings for an applying run: its EMR and service are `n`; the pusher sits still (it is not measured). */
export const applyingEnv = (n: Neighbours) => ({
  FHIR_BASE_URL: n.fhir.url,
  SERVICE_BASE_URL: n.service.url,
  PROCESSOR_POLL_MS: undefined,
  PUSHER_POLL_MS: '600000',
  LOG_LEVEL: 'warn',
});

/** What the processor has done so far, read from the adapter's file. */
interface Progress {
  at: number;
  /** Inbox rows. */
  received: number;
  /** Events applied, discarded as stale or dead. */
  finished: number;
}

function progressReader(dbPath: string): { read(): Progress; close(): void } {
  let db: Database.Database | undefined;
  return {
    read() {
      db ??= new Database(dbPath, { readonly: true, fileMustExist: true });
      const received = db.prepare('SELECT coalesce(max(id), 0) FROM inbox_events').pluck().get() as number;
      const finished = db.prepare("SELECT count(*) FROM processing WHERE state IN ('applied', 'discarded_stale', 'dead')").pluck().get() as number;
      return { at: performance.now(), received, finished };
    },
    close() {
      db?.close();
      db = undefined;
    },
  };
}

/** Events finished per second from `from` until `seconds` have passed or everything received is finished. */
async function drainRate(reader: ReturnType<typeof progressReader>, from: Progress, seconds: number): Promise<{ rate: number; left: number }> {
  let now = from;
  while (now.at - from.at < seconds * 1000 && now.finished < now.received) {
    await sleep(LOOK_EVERY_MS);
    now = reader.read();
  }
  return { rate: ((now.finished - from.finished) * 1000) / Math.max(1, now.at - from.at), left: now.received - now.finished };
}

/** After `serve` stopped: the appointments applied against the FHIR server's, and the inbox against wrk's 2xx. */
async function checkApplied(dbPath: string, fhirUrl: string, runs: WrkResult[]): Promise<{ applied: number; problems: string[] }> {
  const { problems } = runs.length ? inboxProblems(inboxCounts(dbPath), runs) : { problems: [] as string[] };
  const db = new Database(dbPath, { readonly: true });
  const applied = db.prepare("SELECT count(*) FROM processing WHERE state = 'applied' AND entity_key LIKE 'appointment:%'").pluck().get() as number;
  const dead = db.prepare("SELECT count(*) FROM processing WHERE state = 'dead'").pluck().get() as number;
  db.close();
  const res = await fetch(`${fhirUrl}/Appointment?_summary=count`);
  const inEmr = ((await res.json()) as { total: number }).total;
  if (inEmr > applied) problems.push(`${inEmr - applied} appointments in the EMR that were not marked applied (or applied twice)`);
  if (inEmr < applied) problems.push(`${applied - inEmr} appointments marked applied missing from the EMR`);
  if (dead) problems.push(`${dead} dead letters`);
  return { applied, problems };
}

export interface ParkedAndDrained {
  run: WrkResult;
  cpuUsPerRequest: number;
  /** Events/s the processor applied with intake parked (the backlog the parked run stored). */
  drainRate: number;
  problems: string[];
}

/** The parked run (distinct deliveries), then its backlog drained by `serve` started again with neighbours that answer. */
export async function parkedThenDrained(): Promise<ParkedAndDrained> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-parked-'));
  try {
    const parked = await underWrk(dir, {});
    const neighbours = await startNeighbours();
    try {
      const { child, dbPath } = await startServer('serve', dir, [], applyingEnv(neighbours));
      const reader = progressReader(dbPath!);
      try {
        await sleep(DRAIN_WARMUP_SECONDS * 1000);
        const { rate } = await drainRate(reader, reader.read(), DRAIN_SECONDS);
        reader.close();
        await stopServe(child, 'serve draining the parked backlog');
        const { problems } = await checkApplied(dbPath!, neighbours.fhir.url, []);
        return { run: parked.run, cpuUsPerRequest: parked.cpuUsPerRequest, drainRate: rate, problems: [...parked.problems, ...problems] };
      } finally {
        reader.close();
        await child.stop('SIGKILL');
      }
    } finally {
      await neighbours.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Applying {
  run: WrkResult;
  cpuUsPerRequest: number;
  /** Events/s finished while wrk ran… */
  drainDuring: number;
  /** …and over DRAIN_SECONDS once it stopped (or until the backlog was gone). */
  drainAfter: number;
  /** Events left at the end of that window. */
  left: number;
  applied: number;
  problems: string[];
}

/** `serve` applying into a fresh FHIR server while wrk sends, then the drain once intake stops. */
export async function applyingUnderWrk(): Promise<Applying> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-applying-'));
  const neighbours = await startNeighbours();
  try {
    let during = 0;
    let after = { rate: 0, left: 0 };
    const measured = await underWrk(dir, applyingEnv(neighbours), async (reader, wrk) => {
      const start = reader.read();
      await wrk;
      const end = reader.read();
      during = ((end.finished - start.finished) * 1000) / Math.max(1, end.at - start.at);
      after = await drainRate(reader, end, DRAIN_SECONDS);
    });
    const { applied, problems } = await checkApplied(join(dir, 'emr-bridge.db'), neighbours.fhir.url, [measured.warm, measured.run]);
    return {
      run: measured.run,
      cpuUsPerRequest: measured.cpuUsPerRequest,
      drainDuring: during,
      drainAfter: after.rate,
      left: after.left,
      applied,
      problems: [...measured.problems, ...problems],
    };
  } finally {
    await neighbours.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `serve` in `dir` with `env`, warmed up and measured under wrk with distinct deliveries; `during` watches the
 * measured run (it gets the run's promise) and what follows it, before `serve` is stopped with SIGTERM.
 */
async function underWrk(
  dir: string,
  env: Record<string, string | undefined>,
  during?: (reader: ReturnType<typeof progressReader>, wrk: Promise<WrkResult>) => Promise<void>,
): Promise<{ warm: WrkResult; run: WrkResult; cpuUsPerRequest: number; problems: string[] }> {
  const { child, dbPath } = await startServer('serve', dir, [], env);
  const reader = progressReader(dbPath!);
  try {
    const warm = await loadOnce(dir, child.url, 'warmup', WARMUP_DELIVERIES, WARMUP_SECONDS, undefined, 'distinct');
    const pid = child.proc.pid!;
    let cpu0 = 0;
    let cpu = 0;
    const wrk = loadOnce(dir, child.url, 'run', deliveriesFor('serve', warm.rps, SECONDS), SECONDS, () => (cpu0 = cpuSeconds(pid)), 'distinct').then((r) => {
      cpu = cpuSeconds(pid) - cpu0;
      return r;
    });
    await during?.(reader, wrk);
    const run = await wrk;
    reader.close();
    await stopServe(child, 'serve under wrk');
    const { problems } = during ? { problems: [] } : inboxProblems(inboxCounts(dbPath!), [warm, run]);
    return { warm, run, cpuUsPerRequest: (cpu * 1e6) / Math.max(1, run.requests), problems };
  } finally {
    reader.close();
    await child.stop('SIGKILL');
  }
}

/** SIGTERM, and say so should `serve` exit badly (a stop that loses work is a failed run). */
async function stopServe(child: Child, label: string): Promise<void> {
  const code = await child.stop('SIGTERM');
  if (code !== 0) throw new Error(`${label} exited with ${code}:\n${child.output().slice(-2000)}`);
}

export interface ApplyingRound {
  round: number;
  /** Bare node:http's req/s in the same round. */
  bare: number;
  parked: ParkedAndDrained;
  applying: Applying;
}

/** One round of both runs, in alternating order. */
export async function applyingRound(round: number, bare: number): Promise<ApplyingRound> {
  let parked: ParkedAndDrained | undefined;
  let applying: Applying | undefined;
  for (const which of round % 2 === 0 ? ['parked', 'applying'] : ['applying', 'parked']) {
    process.stderr.write(`receiver (wrk): round ${round + 1}, serve ${which === 'parked' ? 'parked, then its backlog drained' : 'applying beside intake'}…\n`);
    if (which === 'parked') parked = await parkedThenDrained();
    else applying = await applyingUnderWrk();
  }
  return { round, bare, parked: parked!, applying: applying! };
}

/** The rows: per round, the parked run and the applying one side by side; then the targets on the medians. */
export function applyingRows(rounds: ApplyingRound[]): { rows: Record<string, string | number>[]; ok: boolean } {
  const rows: Record<string, string | number>[] = [];
  let ok = true;
  for (const r of rounds) {
    const { parked, applying } = r;
    if (parked.problems.length || applying.problems.length) ok = false;
    rows.push({
      round: r.round + 1,
      server: 'serve, processor parked (distinct appointments)',
      'req/s': Math.round(parked.run.rps),
      'p50 ms': parked.run.p50ms.toFixed(2),
      'p99 ms': parked.run.p99ms.toFixed(2),
      'non-2xx': parked.run.non2xx,
      '/bare': (parked.run.rps / r.bare).toFixed(2),
      'CPU µs/req': Math.round(parked.cpuUsPerRequest),
      processor: `drains ${Math.round(parked.drainRate)} events/s with intake parked`,
      inbox: parked.problems.join('; ') || 'ok',
    });
    rows.push({
      round: r.round + 1,
      server: 'serve, processor applying beside intake',
      'req/s': Math.round(applying.run.rps),
      'p50 ms': applying.run.p50ms.toFixed(2),
      'p99 ms': applying.run.p99ms.toFixed(2),
      'non-2xx': applying.run.non2xx,
      '/bare': (applying.run.rps / r.bare).toFixed(2),
      '/floor': `${(applying.run.rps / parked.run.rps).toFixed(2)} of parked`,
      'CPU µs/req': Math.round(applying.cpuUsPerRequest),
      processor: `${Math.round(applying.drainDuring)}/s during intake, ${Math.round(applying.drainAfter)}/s after (${(applying.drainAfter / parked.drainRate).toFixed(2)} of parked; ${applying.left} left)`,
      inbox: applying.problems.join('; ') || `ok (${applying.applied} appointments applied, each once)`,
    });
  }
  const p99 = median(rounds.map((r) => r.applying.run.p99ms));
  const toBare = median(rounds.map((r) => r.applying.run.rps / r.bare));
  const toParked = median(rounds.map((r) => r.applying.run.rps / r.parked.run.rps));
  const drain = median(rounds.map((r) => r.applying.drainAfter / r.parked.drainRate));
  const met = p99 <= 25 && toBare >= 0.15 && toParked >= 0.5 && drain >= 0.9;
  rows.push({
    round: 'median',
    server: 'applying: targets (p99 <= 25, >= 0.15 bare, >= 0.5 parked; drain after >= 0.9 parked)',
    'req/s': Math.round(median(rounds.map((r) => r.applying.run.rps))),
    'p99 ms': p99.toFixed(2),
    '/bare': toBare.toFixed(2),
    '/floor': `${toParked.toFixed(2)} of parked`,
    processor: `after intake ${drain.toFixed(2)} of parked`,
    inbox: `${ok ? 'counts ok' : 'COUNTS FAIL'}; targets ${met ? 'PASS' : 'FAIL'}`,
  });
  return { rows, ok: ok && met };
}
