// Runs wrk (a native HTTP load generator: it does not take the CPU from the server the way a Node one
// does) with bench/wrk/webhooks.lua and reads its report. wrk is not an npm package; the one-line set-up is
// `apt-get install -y wrk` (Debian/Ubuntu). Without it the benchmark stops and says so: it never falls back
// to another load generator.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const WRK_SCRIPT = fileURLToPath(new URL('./webhooks.lua', import.meta.url));
export const WRK_SETUP = 'apt-get install -y wrk';

export class WrkMissingError extends Error {
  override name = 'WrkMissingError';
}

/** Throws WrkMissingError (with the set-up line) unless `wrk` runs. */
export function requireWrk(): void {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error || !/\bwrk\b/.test(`${probe.stdout}${probe.stderr}`)) {
    throw new WrkMissingError(
      `wrk is not installed (${probe.error?.message ?? 'it did not run'}). This benchmark drives its HTTP load with wrk, a native load generator, and has no fallback. One-line set-up: ${WRK_SETUP}`,
    );
  }
}

export interface WrkResult {
  /** Responses wrk completed (any status). */
  requests: number;
  seconds: number;
  /** wrk's Requests/sec. */
  rps: number;
  p50ms: number;
  p75ms: number;
  p90ms: number;
  p99ms: number;
  /** Responses with a status above 399 (wrk's "Non-2xx or 3xx responses"). */
  non2xx: number;
  /** Responses with status 2xx/3xx: requests - non2xx. */
  ok: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
  /** Per wrk thread, from the Lua script's done(): deliveries loaded, built, and whether it ran out and started again. */
  threads: { loaded: number; built: number; wrapped: boolean }[];
  output: string;
}

const UNIT_MS: Record<string, number> = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

function toMs(value: string, unit: string): number {
  const factor = UNIT_MS[unit];
  if (factor === undefined) throw new Error(`unknown wrk time unit ${unit}`);
  return Number(value) * factor;
}

/** Parses wrk's text report (with --latency and the Lua script's done() lines). */
export function parseWrkOutput(output: string): WrkResult {
  const need = (re: RegExp, what: string): RegExpExecArray => {
    const m = re.exec(output);
    if (!m) throw new Error(`wrk output has no ${what}:\n${output}`);
    return m;
  };
  const total = need(/^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)\b/m, 'request count');
  const rps = need(/^Requests\/sec:\s+([\d.]+)/m, 'Requests/sec');
  const pct = (p: number) => {
    const m = need(new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm'), `${p}% latency (was --latency given?)`);
    return toMs(m[1]!, m[2]!);
  };
  const non2xx = /^\s*Non-2xx or 3xx responses:\s+(\d+)/m.exec(output);
  const sock = /^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/m.exec(output);
  const requests = Number(total[1]);
  const bad = non2xx ? Number(non2xx[1]) : 0;
  const threads = [...output.matchAll(/^wrk-lua thread=(\d+) loaded=(\d+) built=(\d+) wrapped=(true|false)$/gm)].map((m) => ({
    loaded: Number(m[2]),
    built: Number(m[3]),
    wrapped: m[4] === 'true',
  }));
  return {
    requests,
    seconds: toMs(total[2]!, total[3]!) / 1000,
    rps: Number(rps[1]),
    p50ms: pct(50),
    p75ms: pct(75),
    p90ms: pct(90),
    p99ms: pct(99),
    non2xx: bad,
    ok: requests - bad,
    socketErrors: sock
      ? { connect: Number(sock[1]), read: Number(sock[2]), write: Number(sock[3]), timeout: Number(sock[4]) }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
    threads,
    output,
  };
}

export interface WrkRun {
  /** The full URL, path included. */
  url: string;
  /** The file bench/wrk/requests-file.ts wrote. */
  requestsFile: string;
  seconds: number;
  threads?: number;
  connections?: number;
}

/** `wrk -t2 -c50 -d<seconds>s --latency -s webhooks.lua <url> -- <file> <threads>`, parsed. */
export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const threads = run.threads ?? 2;
  const connections = run.connections ?? 50;
  const args = [`-t${threads}`, `-c${connections}`, `-d${run.seconds}s`, '--latency', '-s', WRK_SCRIPT, run.url, '--', run.requestsFile, String(threads)];
  const proc = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    proc.once('error', (err) =>
      reject((err as NodeJS.ErrnoException).code === 'ENOENT' ? new WrkMissingError(`wrk is not installed; set-up: ${WRK_SETUP}`) : err),
    );
    proc.once('close', resolve);
  });
  if (code !== 0) throw new Error(`wrk exited with ${code}: wrk ${args.join(' ')}\n${out}`);
  const result = parseWrkOutput(out);
  if (result.threads.length !== threads) throw new Error(`wrk's Lua script reported ${result.threads.length} of ${threads} threads:\n${out}`);
  return result;
}
