// The neighbours' part of GET /readyz: whether the EMR answers its port's ping, and whether the service's
// base address answers at all. Each probe is bounded by a short timeout and its result kept for a few
// seconds on the injected clock, so a load balancer probing every second asks the neighbours at most once
// per interval. These are reported in /readyz, not deciding it (src/runtime/adapter.ts): the receiver keeps
// taking webhooks while either is down, the inbox being durable.
import { request } from 'undici';
import type { Clock } from '../clock.ts';
import { createHttpAgent } from '../http/agent.ts';
import { isTransientStatus } from '../http/transient.ts';

export interface ProbeTiming {
  /** How long one probe may take before it counts as failing. */
  timeoutMs: number;
  /** How long a result is reused before the next probe. */
  cacheMs: number;
}

/** A neighbour's readiness: 2 s to answer, asked at most every 5 s. */
export const NEIGHBOUR_PROBE: ProbeTiming = { timeoutMs: 2_000, cacheMs: 5_000 };

/**
 * `probe` as a readiness check: true when it resolves within the timeout, false when it throws or takes
 * longer. Callers within `cacheMs` of the last result get that result; callers while a probe is under way
 * share it.
 */
export function cachedProbe(probe: () => Promise<unknown>, deps: { clock: Clock } & ProbeTiming): () => Promise<boolean> {
  let last: { ok: boolean; at: number } | undefined;
  let running: Promise<boolean> | undefined;
  const attempt = async (): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), deps.timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([
        probe().then(
          () => true,
          () => false,
        ),
        timedOut,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  return () => {
    if (last && deps.clock.now() - last.at < deps.cacheMs) return Promise.resolve(last.ok);
    running ??= attempt().then((ok) => {
      last = { ok, at: deps.clock.now() };
      running = undefined;
      return ok;
    });
    return running;
  };
}

export interface Reachability {
  /** Resolves when the address answers (any status but a transient one); throws otherwise. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Whether the service answers at its base address: a GET without credentials (the API key goes only to the
 * integration API), any answer that is not a server error, 408 or 429 counting as reachable (a 401 or 404
 * from the base address is the service answering).
 */
export function createReachability(baseUrl: string, timeoutMs: number): Reachability {
  const agent = createHttpAgent({ timeoutMs, connections: 1 });
  const url = `${baseUrl.replace(/\/+$/, '')}/`;
  return {
    async check() {
      const res = await request(url, { method: 'GET', dispatcher: agent, headers: { accept: 'application/json' } });
      await res.body.dump();
      if (isTransientStatus(res.statusCode)) throw new Error(`${url} answered ${res.statusCode}`);
    },
    close: () => agent.close(),
  };
}
