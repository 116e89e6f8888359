// Traces (issue 25): their cost, tracing on against off in one run, on both sides of the inbox. On: every trace
// sampled (OTEL_TRACES_SAMPLER=always_on), exported over OTLP/HTTP protobuf to a collector stand-in in a process of
// its own (./support/otlp-sink.ts: it decodes every export and counts the spans by name). Off: no endpoint set,
// which is what every deployment without a collector runs.
//   - receiver: `emr-bridge serve` under wrk, as ./receiver-wrk.ts and ./sealing.ts drive it (signed 1.5 KB
//     appointment.created deliveries, 50 connections, a 3 s warm-up then the 10 s run, a fresh process and data
//     folder each time; its neighbours refuse, so each event's processing fails and is retried later, as there).
//     After each run the server is stopped and checked: every acknowledged event stored, none twice; on, every row
//     holds its receipt's trace context and the sink counted a receipt span for every stored event; off, none.
//   - processor: ./processor.ts's in-process workload (2,000 appointment events, the in-process EMR port: the
//     processor's own cost, where a span costs the most in proportion), the trace SDK started in this process for
//     the on runs and shut down after each (what it still held is exported then, outside the clock); and the same
//     workload against the bundled FHIR server over HTTP (FHIR_AUTH none), each call a span of its own.
//   - today: with BENCH_BEFORE (a checkout of emr-bridge without traces, its node_modules beside it), `serve` from
//     that checkout too: off against it must be indistinguishable (within 5 %, the machine's noise).
//   - a tenth sampled (parentbased_traceidratio 0.1, what a busy deployment would set): receiver and in-process
//     processor rounds too, shown against off without a target.
// Rounds alternate which setting goes first, so the shared machine's noise falls on both. Targets: the median of the
// rounds' on/off ratios >= 0.9, for requests/s and for events applied/s; CPU per request or event and p99 beside.
// BENCH_ROUNDS (default 3) sets the receiver's rounds; the in-process processor runs twice as many (after one
// warm-up pair, not counted: the JIT).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import type { EmrPort } from '../src/emr/port.ts';
import { silentLogger } from '../src/logger.ts';
import { startTracing } from '../src/tracing/provider.ts';
import { DEFAULT_TRACE_TUNING } from '../src/tracing/tuning.ts';
import { measure as measureProcessor } from './processor.ts';
import { everyTwoXxStored, inboxProblems, loadServer, median, ROUNDS, range, wrkColumns } from './receiver-wrk.ts';
import { type Child, startChild } from './support/child.ts';
import type { Run } from './support/processor-workload.ts';
import { requireWrk, type WrkResult } from './wrk/run-wrk.ts';
import { plainFhirEmr } from './support/fhir-emr.ts';

/** on: every trace sampled; tenth: parentbased_traceidratio 0.1, a deployment's usual choice (no target); off: no endpoint. */
type Setting = 'on' | 'tenth' | 'off' | 'before';
const LABELS: Record<Setting, string> = {
  on: 'on (always_on)',
  tenth: 'on, a tenth sampled',
  off: 'off (no endpoint)',
  before: 'today (BENCH_BEFORE)',
};
const TARGET = 0.9;
/** off/before: indistinguishable means within the machine's noise. */
const SAME_WITHIN = 0.05;
const PROCESSOR_ROUNDS = 2 * ROUNDS;
const BEFORE = process.env.BENCH_BEFORE;

const orderOf = <T>(round: number, xs: T[]): T[] => (round % 2 === 0 ? xs : [...xs].reverse());

/** Every OTEL_ setting, unset (the bench's shell may have some), then the on case's. */
const OFF_ENV: Record<string, string | undefined> = {
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_PROTOCOL: undefined,
  OTEL_EXPORTER_OTLP_HEADERS: undefined,
  OTEL_TRACES_SAMPLER: undefined,
  OTEL_TRACES_SAMPLER_ARG: undefined,
  OTEL_SDK_DISABLED: undefined,
};
const onEnv = (sink: string) => ({
  ...OFF_ENV,
  OTEL_EXPORTER_OTLP_ENDPOINT: sink,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  OTEL_TRACES_SAMPLER: 'always_on',
});
const tenthEnv = (sink: string) => ({ ...onEnv(sink), OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
const envOf = (setting: Setting, sink: string) => (setting === 'on' ? onEnv(sink) : setting === 'tenth' ? tenthEnv(sink) : OFF_ENV);
const traced = (setting: Setting) => setting === 'on' || setting === 'tenth';

interface SinkCounts {
  requests: number;
  bytes: number;
  undecoded: number;
  spans: Record<string, number>;
}
const sinkCounts = async (sink: Child): Promise<SinkCounts> => (await fetch(`${sink.url}/counts`)).json() as Promise<SinkCounts>;
const resetSink = async (sink: Child) => void (await fetch(`${sink.url}/counts/reset`, { method: 'POST' }));

interface ServeRun {
  setting: Setting;
  round: number;
  run: WrkResult;
  cpuUsPerRequest: number;
  rows: number;
  problems: string[];
  spans?: SinkCounts;
}

async function measureServe(setting: Setting, round: number, sink: Child): Promise<ServeRun> {
  const dir = mkdtempSync(join(tmpdir(), `emr-bridge-bench-tracing-${setting}-`));
  try {
    await resetSink(sink);
    // Stopped with SIGTERM: the adapter exports the spans it still holds before it exits.
    const { warm, run, cpuUsPerRequest, dbPath } = await loadServer(
      setting === 'before' ? 'serve-before' : 'serve',
      dir,
      `serve (tracing ${setting})`,
      envOf(setting, sink.url),
    );
    const db = new Database(dbPath!, { readonly: true });
    // Today's schema has no trace_context column.
    const tracedColumn = setting === 'before' ? '0' : 'count(trace_context)';
    const counts = db.prepare(`SELECT count(*) AS rows, count(DISTINCT event_id) AS ids, ${tracedColumn} AS traced FROM inbox_events`).get() as {
      rows: number;
      ids: number;
      traced: number;
    };
    db.close();
    const { problems } = inboxProblems(counts, [warm, run]);
    const spans = traced(setting) ? await sinkCounts(sink) : undefined;
    if (traced(setting)) {
      // Sampled or not, every row holds its receipt's trace context (an unsampled one says so in its flags).
      if (counts.traced !== counts.rows) problems.push(`${counts.rows - counts.traced} rows without a trace context`);
      const receipts = spans!.spans['POST /webhooks/service'] ?? 0;
      const expected = setting === 'on' ? counts.rows : Math.floor(counts.rows * 0.08);
      if (receipts < expected) problems.push(`${receipts} receipt spans exported for ${counts.rows} events stored`);
      if (spans!.undecoded) problems.push(`${spans!.undecoded} exports the sink could not decode`);
    } else if (counts.traced) problems.push(`${counts.traced} rows with a trace context, tracing off`);
    return { setting, round, run, cpuUsPerRequest, rows: counts.rows, problems, ...(spans ? { spans } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ProcessorRun extends Run {
  setting: Setting;
  round: number;
  spans?: SinkCounts;
}

/** ./processor.ts's run on `emr`, the trace SDK running in this process for `on` (shut down, so exported, after). */
async function measureProcessorOnce(
  setting: 'on' | 'tenth' | 'off',
  round: number,
  dir: string,
  sink: Child,
  emr: () => EmrPort & { close(): Promise<void> },
  label: string,
  serverPid?: number,
): Promise<ProcessorRun> {
  const name = `${label}-${setting}-${round}`;
  await resetSink(sink);
  const tracing = traced(setting)
    ? startTracing(
        {
          url: `${sink.url}/v1/traces`,
          protocol: 'http/protobuf',
          headers: {},
          serviceName: 'emr-bridge',
          resourceAttributes: {},
          sampler: setting === 'on' ? { name: 'always_on', ratio: 1 } : { name: 'parentbased_traceidratio', ratio: 0.1 },
          tuning: DEFAULT_TRACE_TUNING,
        },
        silentLogger(),
      )
    : undefined;
  const port = emr();
  let run: Run;
  try {
    run = await measureProcessor(port, dir, name, `${label}${round}${setting}_`, serverPid);
  } finally {
    await tracing?.shutdown();
    await port.close();
    for (const suffix of ['.db', '.db-wal', '.db-shm']) rmSync(join(dir, `${name}${suffix}`), { force: true });
  }
  if (!traced(setting)) return { ...run, setting, round };
  const spans = await sinkCounts(sink);
  const processed = spans.spans['event process'] ?? 0;
  if (processed < (setting === 'on' ? run.applied : Math.floor(run.applied * 0.06)))
    throw new Error(`${name}: ${processed} processing spans exported for ${run.applied} events applied`);
  return { ...run, setting, round, spans };
}

const memoryEmr = () => createMemoryEmr();

function fhirEmr(url: string) {
  return () => plainFhirEmr(url);
}

const spansPerUnit = (c: SinkCounts | undefined, units: number) => (c ? Object.values(c.spans).reduce((a, b) => a + b, 0) / Math.max(1, units) : 0);

export async function benchTracing(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  requireWrk();
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
  const sink = await startChild(['bin/run-ts.js', 'bench/support/otlp-sink.ts']);
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-tracing-processor-'));
  const fhir = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0'], { env: { LOG_LEVEL: 'silent' } });
  try {
    const settings: Setting[] = BEFORE ? ['on', 'tenth', 'off', 'before'] : ['on', 'tenth', 'off'];
    const serve: ServeRun[] = [];
    for (let round = 0; round < ROUNDS; round++)
      for (const setting of orderOf(round, settings)) {
        process.stderr.write(`tracing: receiver round ${round + 1}/${ROUNDS}, serve with tracing ${setting}… (${elapsed()})\n`);
        serve.push(await measureServe(setting, round, sink));
      }

    process.stderr.write(`tracing: processor (in-process EMR port) warm-up pair, then ${PROCESSOR_ROUNDS} rounds… (${elapsed()})\n`);
    const both = ['on', 'off'] as const;
    const three = ['on', 'tenth', 'off'] as const;
    for (const setting of three) await measureProcessorOnce(setting, -1, dir, sink, memoryEmr, 'memory');
    const memory: ProcessorRun[] = [];
    for (let round = 0; round < PROCESSOR_ROUNDS; round++)
      for (const setting of orderOf(round, [...three])) memory.push(await measureProcessorOnce(setting, round, dir, sink, memoryEmr, 'memory'));
    process.stderr.write(`tracing: processor (bundled FHIR server over HTTP), ${ROUNDS} rounds… (${elapsed()})\n`);
    const overHttp: ProcessorRun[] = [];
    for (let round = 0; round < ROUNDS; round++)
      for (const setting of orderOf(round, [...both]))
        overHttp.push(await measureProcessorOnce(setting, round, dir, sink, fhirEmr(fhir.url), 'fhir', fhir.proc.pid));

    const rows: Record<string, string | number>[] = [];
    const at = <T extends { setting: Setting; round: number }>(xs: T[], setting: Setting, round: number) =>
      xs.find((m) => m.setting === setting && m.round === round)!;
    const of = <T extends { setting: Setting }>(xs: T[], setting: Setting) => xs.filter((m) => m.setting === setting);

    // The receiver.
    const serveRatio = (a: Setting, b: Setting) => Array.from({ length: ROUNDS }, (_, r) => at(serve, a, r).run.rps / at(serve, b, r).run.rps);
    const serveCpu = (a: Setting, b: Setting) => Array.from({ length: ROUNDS }, (_, r) => at(serve, a, r).cpuUsPerRequest / at(serve, b, r).cpuUsPerRequest);
    const serveOk = serve.every((m) => m.problems.length === 0 && m.run.non2xx === 0);
    const receiverRatio = median(serveRatio('on', 'off'));
    const receiverPass = receiverRatio >= TARGET && serveOk;
    for (const setting of settings) {
      const ms = of(serve, setting);
      const problems = ms.flatMap((m) => m.problems.map((p) => `round ${m.round + 1}: ${p}`));
      rows.push({
        path: 'receiver: emr-bridge serve under wrk',
        tracing: LABELS[setting],
        ...wrkColumns(ms),
        check: problems.length
          ? problems.join('; ')
          : `${everyTwoXxStored(
              ms,
              ms.map((m) => m.rows),
            )}${
              traced(setting) ? `, each with its trace context; ${median(ms.map((m) => spansPerUnit(m.spans, m.rows))).toFixed(2)} spans/event exported` : ''
            }`,
      });
    }
    rows.push({
      path: 'receiver: emr-bridge serve under wrk',
      tracing: `on/off (target >= ${TARGET})`,
      'rate (median)': receiverRatio.toFixed(3),
      runs: serveRatio('on', 'off')
        .map((r) => r.toFixed(3))
        .join(', '),
      'p99 ms': `on/off ${(median(of(serve, 'on').map((m) => m.run.p99ms)) / median(of(serve, 'off').map((m) => m.run.p99ms))).toFixed(2)}`,
      'CPU µs/unit': `on/off ${median(serveCpu('on', 'off')).toFixed(2)}`,
      check: receiverPass ? 'PASS' : `FAIL${serveOk ? '' : ' (inbox, spans or non-2xx)'}`,
    });
    const tenthRatios = serveRatio('tenth', 'off');
    rows.push({
      path: 'receiver: emr-bridge serve under wrk',
      tracing: 'a tenth sampled/off (no target)',
      'rate (median)': median(tenthRatios).toFixed(3),
      runs: tenthRatios.map((r) => r.toFixed(3)).join(', '),
      'p99 ms': '',
      'CPU µs/unit': `${median(serveCpu('tenth', 'off')).toFixed(2)}`,
      check: '',
    });
    let todayPass = true;
    if (BEFORE) {
      const r = median(serveRatio('off', 'before'));
      todayPass = Math.abs(r - 1) <= SAME_WITHIN;
      rows.push({
        path: 'receiver: emr-bridge serve under wrk',
        tracing: `off/today (target within ${SAME_WITHIN * 100} %)`,
        'rate (median)': r.toFixed(3),
        runs: serveRatio('off', 'before')
          .map((x) => x.toFixed(3))
          .join(', '),
        'p99 ms': '',
        'CPU µs/unit': `off/today ${median(serveCpu('off', 'before')).toFixed(2)}`,
        check: todayPass ? 'PASS' : 'FAIL',
      });
    }

    // The processor, on the in-process EMR port and over HTTP.
    const cpuPerEvent = (r: Run) => r.cpuUs / r.applied;
    let processorPass = true;
    for (const [path, runs, rounds] of [
      ['processor: in-process EMR port, 2,000 events', memory, PROCESSOR_ROUNDS],
      ['processor: bundled FHIR server over HTTP, 2,000 events', overHttp, ROUNDS],
    ] as const) {
      const ratios = Array.from({ length: rounds }, (_, r) => at(runs, 'on', r).rate / at(runs, 'off', r).rate);
      const cpuRatios = Array.from({ length: rounds }, (_, r) => cpuPerEvent(at(runs, 'on', r)) / cpuPerEvent(at(runs, 'off', r)));
      for (const setting of three.filter((x) => runs.some((r) => r.setting === x))) {
        const rs = of(runs, setting);
        rows.push({
          path,
          tracing: LABELS[setting],
          'rate (median)': `${Math.round(median(rs.map((r) => r.rate)))} events/s`,
          runs: rs.map((r) => Math.round(r.rate)).join(', '),
          'p99 ms': '',
          'CPU µs/unit': `${Math.round(median(rs.map(cpuPerEvent)))} /event`,
          check: traced(setting) ? `all applied; ${median(rs.map((r) => spansPerUnit(r.spans, r.applied))).toFixed(2)} spans/event exported` : 'all applied',
        });
      }
      const ratio = median(ratios);
      const pass = ratio >= TARGET;
      processorPass &&= pass;
      rows.push({
        path,
        tracing: `on/off (target >= ${TARGET})`,
        'rate (median)': ratio.toFixed(3),
        runs: `${range(ratios, 3)} over ${rounds} rounds`,
        'p99 ms': '',
        'CPU µs/unit': `on/off ${median(cpuRatios).toFixed(2)}`,
        check: pass ? 'PASS' : 'FAIL',
      });
      if (runs.some((r) => r.setting === 'tenth')) {
        const tenth = Array.from({ length: rounds }, (_, r) => at(runs, 'tenth', r).rate / at(runs, 'off', r).rate);
        rows.push({
          path,
          tracing: 'a tenth sampled/off (no target)',
          'rate (median)': median(tenth).toFixed(3),
          runs: `${range(tenth, 3)} over ${rounds} rounds`,
          'p99 ms': '',
          'CPU µs/unit': '',
          check: '',
        });
      }
    }
    process.stderr.write(`tracing: done in ${elapsed()}\n`);
    return { rows, ok: receiverPass && processorPass && todayPass };
  } finally {
    await fhir.stop();
    await sink.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
