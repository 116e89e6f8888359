// What is failing now and since when, per dependency (database, EMR, service): fed by every call the
// adapter makes, read by GET /admin/status and /metrics. A dependency that starts failing, and one that
// recovers, each log one `"alert": true` line: an incident is visible without a line per event.
import type { Clock } from '../clock.ts';
import { toIso } from '../clock.ts';
import { AppError, describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';

export const DEPENDENCIES = ['database', 'emr', 'service'] as const;
export type Dependency = (typeof DEPENDENCIES)[number];

export interface ComponentStatus {
  name: Dependency;
  ok: boolean;
  /** Why it is failing (an error code and message, never patient data); null when ok. */
  reason: string | null;
  /** When it entered its current state. */
  since: string;
}

export interface DependencyStatus {
  ok(name: Dependency): void;
  failing(name: Dependency, reason: string): void;
  components(): ComponentStatus[];
}

export function createDependencyStatus(deps: { clock: Clock; logger: Logger }): DependencyStatus {
  const started = deps.clock.now();
  const state = new Map<Dependency, { ok: boolean; reason: string | null; since: number }>(
    DEPENDENCIES.map((name) => [name, { ok: true, reason: null, since: started }]),
  );
  return {
    ok(name) {
      const s = state.get(name)!;
      if (s.ok) return;
      deps.logger.warn({ alert: true, dependency: name, failingSinceMs: s.since }, `${name} incident ended`);
      state.set(name, { ok: true, reason: null, since: deps.clock.now() });
    },
    failing(name, reason) {
      const s = state.get(name)!;
      if (!s.ok) {
        // Same incident; the reason may sharpen (an outage that becomes a refusal) without a new alert.
        s.reason = reason;
        return;
      }
      deps.logger.error({ alert: true, dependency: name, reason }, `${name} is failing`);
      state.set(name, { ok: false, reason, since: deps.clock.now() });
    },
    components: () => DEPENDENCIES.map((name) => ({ name, ...state.get(name)!, since: toIso(state.get(name)!.since) })),
  };
}

/**
 * Wraps every async method of a client so that each call reports on its dependency: an answer (a success,
 * or a refusal of that one call) means it is up; an outage or an incident (retryable errors) means it is not.
 */
export function observed<T extends object>(target: T, name: Dependency, status: DependencyStatus): T {
  const wrapped = { ...target } as Record<string, unknown>;
  for (const [key, value] of Object.entries(target)) {
    if (typeof value !== 'function' || key === 'close') continue;
    wrapped[key] = async (...args: unknown[]) => {
      try {
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        status.ok(name);
        return result;
      } catch (err) {
        if (err instanceof AppError && err.retryable) {
          const d = describeError(err);
          status.failing(name, `${d.code ?? d.type}: ${d.message}`);
        } else if (err instanceof AppError) status.ok(name);
        throw err;
      }
    };
  }
  return wrapped as T;
}
