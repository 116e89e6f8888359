// What is failing now and since when, per dependency (database, EMR, service): fed by every call the
// adapter makes, read by GET /admin/status and /metrics. A dependency that starts failing, and one that
// recovers, each log one `"alert": true` line: an incident is visible without a line per event. A dependency
// in planned downtime (the EMR: ./emr-downtime.ts) says so, until when and why, and a call that fails
// meanwhile raises no incident: it is down on purpose.
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
  /** In planned downtime now: until when (ISO 8601) and why. */
  downtime?: { until: string; reason: string };
}

export interface DependencyStatus {
  /**
   * A call through `via` (a method name) went through. It ends an outage, and it ends an incident when it is
   * the kind of call that was refused: an EMR that refuses only document contents stays failing while
   * its other calls work, instead of failing and recovering on every scan.
   */
  ok(name: Dependency, via?: string): void;
  failing(name: Dependency, reason: string, opts?: { via?: string; incident?: boolean }): void;
  components(): ComponentStatus[];
}

/** A dependency's planned downtime in force now, if any (src/status/emr-downtime.ts for the EMR). */
export type PlannedDowntimeOf = (name: Dependency) => { until: number; reason: string } | undefined;

export function createDependencyStatus(deps: { clock: Clock; logger: Logger; downtime?: PlannedDowntimeOf }): DependencyStatus {
  const started = deps.clock.now();
  interface State {
    ok: boolean;
    reason: string | null;
    since: number;
    /** While failing with an incident: the kind of call that was refused. */
    incidentVia?: string;
  }
  const state = new Map<Dependency, State>(DEPENDENCIES.map((name) => [name, { ok: true, reason: null, since: started }]));
  const view = (name: Dependency): ComponentStatus => {
    const s = state.get(name)!;
    const d = deps.downtime?.(name);
    return { name, ok: s.ok, reason: s.reason, since: toIso(s.since), ...(d ? { downtime: { until: toIso(d.until), reason: d.reason } } : {}) };
  };
  return {
    ok(name, via) {
      const s = state.get(name)!;
      if (s.ok) return;
      if (s.incidentVia !== undefined && via !== undefined && via !== s.incidentVia) return;
      deps.logger.warn({ alert: true, dependency: name, failingSinceMs: s.since }, `${name} incident ended`);
      state.set(name, { ok: true, reason: null, since: deps.clock.now() });
    },
    failing(name, reason, opts = {}) {
      // Down on purpose: a call that failed as the downtime began is no incident and pages nobody.
      if (deps.downtime?.(name)) return;
      const s = state.get(name)!;
      // A refused probe (ping) says nothing about which calls are refused: any call that passes ends it.
      const incidentVia = opts.incident && opts.via !== 'ping' ? opts.via : undefined;
      if (!s.ok) {
        // Same incident; the reason may sharpen (an outage that becomes a refusal) without a new alert. The
        // kind of call first refused stays the one whose success ends it: its work waits and is retried.
        s.reason = reason;
        s.incidentVia ??= incidentVia;
        return;
      }
      deps.logger.error({ alert: true, dependency: name, reason }, `${name} is failing`);
      state.set(name, { ok: false, reason, since: deps.clock.now(), ...(incidentVia !== undefined ? { incidentVia } : {}) });
    },
    components: () => DEPENDENCIES.map(view),
  };
}

const CLOSE_ONLY: ReadonlySet<string> = new Set(['close']);

/**
 * Wraps every async method of a client so that each call reports on its dependency: an answer (a success,
 * or a refusal of that one call) means it is up; an outage or an incident (retryable errors) means it is not.
 * The methods named in `local` make no call to it and are left as they are.
 */
export function observed<T extends object>(target: T, name: Dependency, status: DependencyStatus, local: ReadonlySet<string> = CLOSE_ONLY): T {
  const wrapped = { ...target } as Record<string, unknown>;
  for (const [key, value] of Object.entries(target)) {
    if (typeof value !== 'function' || local.has(key)) continue;
    wrapped[key] = async (...args: unknown[]) => {
      try {
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        status.ok(name, key);
        return result;
      } catch (err) {
        if (err instanceof AppError && err.retryable) {
          const d = describeError(err);
          status.failing(name, `${d.code ?? d.type}: ${d.message}`, { via: key, incident: err.incident });
        } else if (err instanceof AppError) status.ok(name, key);
        throw err;
      }
    };
  }
  return wrapped as T;
}
