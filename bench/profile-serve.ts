// Where `emr-bridge serve` spends its CPU under the receiver benchmark's load (issue 14): the adapter runs
// with `node --cpu-prof`, set up as in bench/receiver-wrk.ts (neighbours that refuse, workers still), gets
// a 3 s warm-up and then the 10 s wrk run (two threads, 50 connections, unique signed 1.5 KB deliveries),
// and the profile's samples taken during that run (not start-up, not the warm-up) are summarised: top self
// and inclusive items by function and by file (bench/support/cpuprofile-summary.ts).
//
// Run: npm run bench -- receiver-profile   (or node bin/run-ts.js bench/profile-serve.ts [top N] [--keep] [--applying])
// --keep leaves the .cpuprofile (for Chrome DevTools / speedscope) and prints where it is. --applying (or
// BENCH_PROFILE_APPLYING=1 with npm run bench): the processor at work beside the receiver, as in
// ./receiver-applying.ts (the bundled FHIR server, a service that answers, an appointment of its own per delivery).
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { applyingEnv, startNeighbours } from './receiver-applying.ts';
import { deliveriesFor, loadOnce, startServer } from './receiver-wrk.ts';
import { ROOT } from './support/child.ts';
import { type CpuProfile, printSummary, summarizeProfile } from './support/cpuprofile-summary.ts';
import { requireWrk } from './wrk/run-wrk.ts';

const SECONDS = 10;
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profileServe(
  opts: { top?: number; keep?: boolean; applying?: boolean } = {},
): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  requireWrk();
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-profile-'));
  const profDir = join(dir, 'profiles');
  const neighbours = opts.applying ? await startNeighbours() : undefined;
  const entities = opts.applying ? 'distinct' : 'one';
  try {
    const mapsFile = join(dir, 'source-maps.json');
    // --enable-source-maps and the preload only record where tsx's compiled code came from (read at exit).
    const { child } = await startServer(
      'serve',
      dir,
      ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--enable-source-maps', '--import', join(ROOT, 'bench/support/source-maps-at-exit.mjs')],
      { BENCH_SOURCE_MAPS_OUT: mapsFile, ...(neighbours ? applyingEnv(neighbours) : {}) },
    );
    let window: { fromUs: number; toUs: number };
    let rps: number;
    try {
      const warm = await loadOnce(dir, child.url, 'warmup', 40_000, 3, undefined, entities);
      const count = deliveriesFor('serve', warm.rps, SECONDS);
      const run = await loadOnce(dir, child.url, 'run', count, SECONDS, undefined, entities);
      // wrk's own duration, back from its end: not the second or two its threads spend loading the deliveries.
      const toUs = nowUs();
      window = { fromUs: toUs - Math.round(run.seconds * 1e6), toUs };
      rps = run.rps;
      process.stdout.write(
        `\nserve under wrk with --cpu-prof: ${Math.round(run.rps)} req/s, p50 ${run.p50ms} ms, p99 ${run.p99ms} ms, non-2xx ${run.non2xx}\n`,
      );
    } finally {
      await child.stop('SIGTERM');
    }
    const sourceMaps = existsSync(mapsFile) ? (JSON.parse(readFileSync(mapsFile, 'utf8')) as Record<string, SourceMapPayload>) : undefined;
    if (!sourceMaps) process.stderr.write('no source maps were written: .ts frames show compiled positions\n');
    // One file per thread (the main thread, tsx's loader thread): the busiest in the window is the main one.
    const profiles = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => {
        const profile = JSON.parse(readFileSync(join(profDir, f), 'utf8')) as CpuProfile;
        return { file: join(profDir, f), summary: summarizeProfile(profile, { top: opts.top ?? 25, window, ...(sourceMaps ? { sourceMaps } : {}) }) };
      })
      .sort((a, b) => b.summary.busySamples - a.summary.busySamples);
    const main = profiles[0];
    if (!main) throw new Error(`no .cpuprofile written in ${profDir}`);
    if (main.summary.samples === 0) throw new Error(`the profile has no samples in the load window (${main.file})`);
    printSummary(main.summary, `emr-bridge serve${opts.applying ? ' with the processor applying' : ''}, the ${SECONDS} s wrk run`);
    if (opts.keep) {
      const kept = join(tmpdir(), `emr-bridge-serve-${Date.now()}.cpuprofile`);
      copyFileSync(main.file, kept);
      if (sourceMaps) copyFileSync(mapsFile, kept.replace(/\.cpuprofile$/, '.source-maps.json'));
      process.stdout.write(`\nprofile kept: ${kept}${sourceMaps ? ' (and its .source-maps.json)' : ''}\n`);
    }
    const busy = (100 * main.summary.busySamples) / main.summary.samples;
    return {
      ok: true,
      rows: [{ server: 'emr-bridge serve (profiled)', 'req/s': Math.round(rps), 'main thread busy %': busy.toFixed(0), samples: main.summary.samples }],
    };
  } finally {
    await neighbours?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 25);
  const result = await profileServe({ top, keep: args.includes('--keep'), applying: args.includes('--applying') });
  console.table(result.rows);
}
