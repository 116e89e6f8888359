// Sealing patient data at rest (issue 24): its cost, sealing on against off in one run, on both sides of the inbox.
//   - receiver: `emr-bridge serve` under wrk, as ./receiver-wrk.ts drives it (signed 1.5 KB appointment.created
//     deliveries, 50 connections, a 3 s warm-up then the 10 s run, a fresh process and data folder each time),
//     with DATA_ENCRYPTION=on (no key set: serve generates DATA_DIR/data-keys.json and seals every body before
//     the group commit) against DATA_ENCRYPTION=off. Its neighbours refuse and its workers poll every 10 minutes,
//     as there: what the receiver pays to seal (the bodies' opening shows in the processor part).
//     After each run the server is stopped and its inbox checked: every acknowledged event stored, none twice,
//     and every stored body sealed (on: starts with SEALED_PREFIX, and a sample opens with the generated key
//     for its own row) or clear (off: JSON, none sealed).
//   - processor: ./processor.ts's in-process workload (2,000 appointment events, the in-process EMR port), its
//     bodies stored sealed (as the inbox seals them; before the clock starts) against clear: the processor's
//     cost of opening them at intake.
// Rounds alternate which setting goes first, so the shared machine's noise falls on both. Targets: the median
// of the rounds' on/off ratios >= 0.9, for requests/s and for events applied/s; CPU per request or event and
// p99 beside them. BENCH_ROUNDS (default 3) sets the receiver's rounds; the processor runs twice as many
// (after one warm-up pair, not counted: the JIT).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock } from '../src/clock.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import { SEALED_PREFIX } from '../src/sealing/format.ts';
import { generateKeyFile, importKeySet, parseKeyFile } from '../src/sealing/keys.ts';
import { createSealer, type Sealer } from '../src/sealing/sealer.ts';
import { GENERATED_KEY_FILE } from '../src/sealing/settings.ts';
import { INBOX_BODY, sealContext } from '../src/storage/sealed-contexts.ts';
import { measure as measureProcessor } from './processor.ts';
import { everyTwoXxStored, inboxProblems, loadServer, median, ROUNDS, range, wrkColumns } from './receiver-wrk.ts';
import type { Run } from './support/processor-workload.ts';
import { requireWrk, type WrkResult } from './wrk/run-wrk.ts';

type Setting = 'on' | 'off';
const SETTINGS: Setting[] = ['on', 'off'];
const TARGET = 0.9;
const PROCESSOR_ROUNDS = 2 * ROUNDS;
/** Stored bodies opened after a sealed run (every body's prefix is checked; these also open, for their own row). */
const OPEN_SAMPLE = 200;

const orderOf = (round: number): Setting[] => (round % 2 === 0 ? SETTINGS : [...SETTINGS].reverse());

interface ServeRun {
  setting: Setting;
  round: number;
  run: WrkResult;
  cpuUsPerRequest: number;
  inbox: { rows: number; acknowledged: number; problems: string[] };
}

async function measureServe(setting: Setting, round: number): Promise<ServeRun> {
  const dir = mkdtempSync(join(tmpdir(), `emr-bridge-bench-sealing-${setting}-`));
  try {
    // No key source from this shell: `on` is zero-configuration mode (a key generated under DATA_DIR).
    const { warm, run, cpuUsPerRequest, dbPath } = await loadServer('serve', dir, `serve (sealing ${setting})`, {
      DATA_ENCRYPTION: setting,
      DATA_KEYS_PATH: undefined,
      DATA_KEYS_COMMAND: undefined,
    });
    const inbox = await checkInbox(dbPath!, dir, setting, [warm, run]);
    return { setting, round, run, cpuUsPerRequest, inbox };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * After the server stopped: every acknowledged event is in inbox_events, none twice, none never sent; every
 * body sealed (on) or clear (off); a sample of sealed bodies opens, with the key serve generated, for its row.
 */
async function checkInbox(dbPath: string, dir: string, setting: Setting, runs: WrkResult[]): Promise<ServeRun['inbox']> {
  const db = new Database(dbPath, { readonly: true });
  const prefix = Buffer.from(SEALED_PREFIX, 'latin1');
  const counts = db
    .prepare(
      `SELECT count(*) AS rows, count(DISTINCT event_id) AS ids, count(*) FILTER (WHERE body IS NULL) AS pruned,
              count(*) FILTER (WHERE substr(body, 1, ?) = ?) AS sealed, count(*) FILTER (WHERE substr(body, 1, 1) = X'7B') AS clear
         FROM inbox_events`,
    )
    .get(prefix.length, prefix) as { rows: number; ids: number; pruned: number; sealed: number; clear: number };
  const sample = db.prepare('SELECT event_id AS eventId, body FROM inbox_events WHERE body IS NOT NULL ORDER BY random() LIMIT ?').all(OPEN_SAMPLE) as {
    eventId: string;
    body: Buffer;
  }[];
  db.close();
  const { rows } = counts;
  const { acknowledged, problems } = inboxProblems(counts, runs);
  if (counts.pruned) problems.push(`${counts.pruned} bodies missing`);
  const expected = setting === 'on' ? counts.sealed : counts.clear;
  if (expected !== rows - counts.pruned) problems.push(`${rows - counts.pruned - expected} bodies not ${setting === 'on' ? 'sealed' : 'clear'}`);
  if (setting === 'off' && counts.sealed) problems.push(`${counts.sealed} bodies sealed with sealing off`);
  let opener: Sealer | undefined;
  if (setting === 'on') {
    const keyPath = join(dir, GENERATED_KEY_FILE);
    if (existsSync(keyPath)) opener = createSealer(await importKeySet(parseKeyFile(readFileSync(keyPath, 'utf8'), keyPath)));
    else problems.push(`no ${GENERATED_KEY_FILE} generated under DATA_DIR`);
  }
  let unopened = 0;
  for (const { eventId, body } of sample) {
    try {
      const plain = opener ? await opener.open(body, sealContext(INBOX_BODY, eventId)) : body;
      if ((JSON.parse(plain.toString('utf8')) as { eventId?: unknown }).eventId !== eventId) unopened++;
    } catch {
      unopened++;
    }
  }
  if (unopened) problems.push(`${unopened} of ${sample.length} sampled bodies did not ${opener ? 'open' : 'parse'} as their own event`);
  return { rows, acknowledged, problems };
}

interface ProcessorRun extends Run {
  setting: Setting;
  round: number;
}

/** ./processor.ts's in-process run, its bodies sealed with `sealer` or clear; then the stored bodies are checked. */
async function measureProcessorOnce(setting: Setting, round: number, dir: string, sealer: Sealer): Promise<ProcessorRun> {
  const name = `processor-${setting}-${round}`;
  const run = await measureProcessor(createMemoryEmr(), dir, name, '', undefined, undefined, setting === 'on' ? sealer : undefined);
  const db = new Database(join(dir, `${name}.db`), { readonly: true });
  const prefix = Buffer.from(SEALED_PREFIX, 'latin1');
  const { rows, sealed } = db
    .prepare('SELECT count(*) AS rows, count(*) FILTER (WHERE substr(body, 1, ?) = ?) AS sealed FROM inbox_events')
    .get(prefix.length, prefix) as { rows: number; sealed: number };
  db.close();
  rmSync(join(dir, `${name}.db`), { force: true });
  rmSync(join(dir, `${name}.db-wal`), { force: true });
  rmSync(join(dir, `${name}.db-shm`), { force: true });
  if (sealed !== (setting === 'on' ? rows : 0)) throw new Error(`${name}: ${sealed} of ${rows} stored bodies sealed`);
  if (run.applied !== rows) throw new Error(`${name}: ${run.applied} of ${rows} events applied`);
  return { ...run, setting, round };
}

export async function benchSealing(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  requireWrk();
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;

  const serve: ServeRun[] = [];
  for (let round = 0; round < ROUNDS; round++)
    for (const setting of orderOf(round)) {
      process.stderr.write(`sealing: receiver round ${round + 1}/${ROUNDS}, serve with sealing ${setting}… (${elapsed()})\n`);
      serve.push(await measureServe(setting, round));
    }
  const receiverSeconds = (Date.now() - started) / 1000;

  const processorStarted = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-sealing-processor-'));
  const processor: ProcessorRun[] = [];
  try {
    const sealer = createSealer(await importKeySet(generateKeyFile(systemClock)));
    process.stderr.write(`sealing: processor warm-up pair, then ${PROCESSOR_ROUNDS} rounds… (${elapsed()})\n`);
    for (const setting of SETTINGS) await measureProcessorOnce(setting, -1, dir, sealer);
    for (let round = 0; round < PROCESSOR_ROUNDS; round++)
      for (const setting of orderOf(round)) processor.push(await measureProcessorOnce(setting, round, dir, sealer));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const processorSeconds = (Date.now() - processorStarted) / 1000;

  // Per setting, its runs; per round, on/off.
  const serveOf = (setting: Setting) => serve.filter((m) => m.setting === setting);
  const serveAt = (setting: Setting, round: number) => serve.find((m) => m.setting === setting && m.round === round)!;
  const serveRatios = Array.from({ length: ROUNDS }, (_, r) => serveAt('on', r).run.rps / serveAt('off', r).run.rps);
  const serveCpuRatios = Array.from({ length: ROUNDS }, (_, r) => serveAt('on', r).cpuUsPerRequest / serveAt('off', r).cpuUsPerRequest);
  const procOf = (setting: Setting) => processor.filter((m) => m.setting === setting);
  const procAt = (setting: Setting, round: number) => processor.find((m) => m.setting === setting && m.round === round)!;
  const procRatios = Array.from({ length: PROCESSOR_ROUNDS }, (_, r) => procAt('on', r).rate / procAt('off', r).rate);
  const cpuPerEvent = (r: Run) => r.cpuUs / r.applied;
  const procCpuRatios = Array.from({ length: PROCESSOR_ROUNDS }, (_, r) => cpuPerEvent(procAt('on', r)) / cpuPerEvent(procAt('off', r)));

  const inboxOk = serve.every((m) => m.inbox.problems.length === 0 && m.run.non2xx === 0);
  const receiverRatio = median(serveRatios);
  const processorRatio = median(procRatios);
  const receiverPass = receiverRatio >= TARGET && inboxOk;
  const processorPass = processorRatio >= TARGET;

  const rows: Record<string, string | number>[] = [];
  for (const setting of SETTINGS) {
    const ms = serveOf(setting);
    const problems = ms.flatMap((m) => m.inbox.problems.map((p) => `round ${m.round + 1}: ${p}`));
    rows.push({
      path: 'receiver: emr-bridge serve under wrk',
      sealing: setting,
      ...wrkColumns(ms),
      check: problems.length
        ? problems.join('; ')
        : `${everyTwoXxStored(
            ms,
            ms.map((m) => m.inbox.rows),
          )}, ${setting === 'on' ? 'all sealed, sample opens' : 'all clear'}`,
    });
  }
  rows.push({
    path: 'receiver: emr-bridge serve under wrk',
    sealing: `on/off (target >= ${TARGET})`,
    'rate (median)': receiverRatio.toFixed(3),
    runs: serveRatios.map((r) => r.toFixed(3)).join(', '),
    'p99 ms': `on/off ${(median(serveOf('on').map((m) => m.run.p99ms)) / median(serveOf('off').map((m) => m.run.p99ms))).toFixed(2)}`,
    'CPU µs/unit': `on/off ${median(serveCpuRatios).toFixed(2)}`,
    check: receiverPass ? 'PASS' : `FAIL${inboxOk ? '' : ' (inbox or non-2xx)'}`,
  });
  for (const setting of SETTINGS) {
    const rs = procOf(setting);
    rows.push({
      path: 'processor: in-process EMR port, 2,000 events',
      sealing: setting,
      'rate (median)': `${Math.round(median(rs.map((r) => r.rate)))} events/s`,
      runs: rs.map((r) => Math.round(r.rate)).join(', '),
      'p99 ms': '',
      'CPU µs/unit': `${Math.round(median(rs.map(cpuPerEvent)))} /event`,
      check: setting === 'on' ? 'all bodies sealed, all applied' : 'all bodies clear, all applied',
    });
  }
  rows.push({
    path: 'processor: in-process EMR port, 2,000 events',
    sealing: `on/off (target >= ${TARGET})`,
    'rate (median)': processorRatio.toFixed(3),
    runs: `${range(procRatios, 3)} over ${PROCESSOR_ROUNDS} rounds`,
    'p99 ms': '',
    'CPU µs/unit': `on/off ${median(procCpuRatios).toFixed(2)}`,
    check: processorPass ? 'PASS' : 'FAIL',
  });
  process.stderr.write(`sealing: done in ${elapsed()} (receiver ${Math.round(receiverSeconds)} s, processor ${Math.round(processorSeconds)} s)\n`);
  return { rows, ok: receiverPass && processorPass };
}
