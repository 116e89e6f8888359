// Whether the store takes writes now, learnt from the inbox's real commits: a failed commit (SQLite's
// SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_BUSY past busy_timeout…; PostgreSQL's SQLSTATE 53100
// disk full, 25006 read-only, a refused connection…) marks it failing with the engine's code; the next commit
// that succeeds marks it writable again. While it fails, a probe commits one small row every few seconds,
// because a load balancer that has stopped sending means no webhook will come to try.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { isPromise, type MaybePromise } from '../storage/inbox.ts';

export interface WriteFailure {
  /** The engine's error code (SQLITE_FULL, 53100, ECONNREFUSED…); never patient data. */
  code: string;
  /** Epoch ms of the first failure of this incident. */
  since: number;
}

export interface WriteHealth {
  /** The failure under way, or undefined while writes commit. */
  failure(): WriteFailure | undefined;
  committed(): void;
  failed(err: unknown): void;
  /** Stops the probe (on close); nothing is scheduled afterwards. */
  stop(): void;
}

export interface WriteHealthDeps {
  clock: Clock;
  logger: Logger;
  /** One real committed write; throws (or rejects) when the store cannot take it. */
  probe: (nowMs: number) => MaybePromise<void>;
  /** How often the probe runs while writes fail (default 2 s). */
  probeIntervalMs?: number;
}

export const DEFAULT_PROBE_INTERVAL_MS = 2000;

const errorCode = (err: unknown): string => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown';
};

export function createWriteHealth(deps: WriteHealthDeps): WriteHealth {
  const { clock, logger } = deps;
  const interval = deps.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  let current: WriteFailure | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function committed(): void {
    if (!current) return;
    logger.warn({ code: current.code, failingForMs: clock.now() - current.since }, 'inbox store takes writes again');
    current = undefined;
    clearTimeout(timer);
    timer = undefined;
  }

  function failed(err: unknown): void {
    const code = errorCode(err);
    if (current) {
      current.code = code;
    } else {
      current = { code, since: clock.now() };
      logger.error({ code }, 'inbox store cannot take writes');
    }
    scheduleProbe();
  }

  function scheduleProbe(): void {
    if (stopped || timer) return;
    timer = setTimeout(runProbe, interval);
    timer.unref();
  }

  function runProbe(): void {
    timer = undefined;
    if (stopped || !current) return;
    let outcome: MaybePromise<void>;
    try {
      outcome = deps.probe(clock.now());
    } catch (err) {
      failed(err);
      return;
    }
    if (isPromise(outcome)) outcome.then(committed, failed);
    else committed();
  }

  return {
    failure: () => (current ? { ...current } : undefined),
    committed,
    failed,
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
