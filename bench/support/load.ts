// A closed-loop load generator: N workers over one undici Pool, each sending the next request as soon as
// its previous one is answered. Bounded by a request count and a time limit.
import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  ok: number;
  errors: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p99ms: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runLoad(opts: {
  url: string;
  path: string;
  concurrency: number;
  requests: number;
  maxSeconds: number;
  /** Builds request i; called just before it is sent. */
  build: (i: number) => { headers: Record<string, string>; body: Buffer };
  onOk?: (i: number) => void;
}): Promise<LoadResult> {
  const pool = new Pool(opts.url, { connections: opts.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  let ok = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + opts.maxSeconds * 1000;
  async function worker() {
    while (next < opts.requests && performance.now() < deadline) {
      const i = next++;
      const { headers, body } = opts.build(i);
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: opts.path, method: 'POST', headers, body });
        await res.body.dump();
        latencies.push(performance.now() - t0);
        if (res.statusCode >= 200 && res.statusCode < 300) {
          ok++;
          opts.onOk?.(i);
        } else errors++;
      } catch {
        errors++;
      }
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length + 0,
    ok,
    errors,
    seconds,
    rps: ok / seconds,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
  };
}
