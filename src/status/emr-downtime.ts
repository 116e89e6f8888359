// Whether the EMR is in planned downtime now, until when and why: the one answer the processor, the pusher, the
// readiness and capability checks, GET /admin/status, the console and the metrics read. Two sources: the
// EMR_DOWNTIME windows (src/work/downtime-windows.ts) and what operators set through the admin API or the
// console (src/storage/emr-downtime.ts: a downtime until a time, with a reason; or a scheduled window ended
// early). Operators' changes are in the database, so every replica honours them (each reads them again every
// few seconds; the replica that took the change at once) and a restart keeps them. Read on the injected clock.
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.ts';
import { toIso } from '../clock.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { EmrDowntimeRows, EmrDowntimeStore } from '../storage/emr-downtime.ts';
import { createDowntimeSchedule, type DowntimeWindow } from '../work/downtime-windows.ts';

export interface PlannedDowntime {
  /** Epoch ms: when it ends (windows that overlap or follow one another at once are one). */
  until: number;
  /** The operator's reason, or which EMR_DOWNTIME window it is. */
  reason: string;
  source: 'operator' | 'schedule';
}

export interface EmrDowntime {
  /** The downtime in force now; undefined when there is none. Cheap: asked before every piece of EMR work. */
  current(): PlannedDowntime | undefined;
  /** The next EMR_DOWNTIME window to start (within 40 days), for people planning around it. */
  nextScheduled(): { start: number; until: number; window: string } | undefined;
  /** EMR_DOWNTIME's windows, as written. */
  readonly windows: readonly string[];
  /** Reads operators' changes from the store (until one is attached: none). */
  refresh(): Promise<void>;
  /** Attaches the store (it opens after the EMR module starts) and reads it. */
  attachStore(store: EmrDowntimeStore): Promise<void>;
  /** An operator's downtime from now until `until` (which it replaces, if one was set): what is in force after. */
  start(until: number, reason: string): Promise<PlannedDowntime>;
  /**
   * Ends the operator's downtime and the scheduled window in force now, if any (the EMR is back early); says
   * whether a downtime was in force.
   */
  end(): Promise<{ ended: boolean }>;
  /** Reads the store again every `everyMs` (real time) until the returned function is called. */
  watch(everyMs?: number): () => void;
}

/** How often a replica reads operators' changes: a downtime set on another replica counts here this soon. */
export const DOWNTIME_REFRESH_MS = 5_000;

/** How an EMR_DOWNTIME window is named as the reason of its downtime. */
export const scheduledReason = (window: DowntimeWindow): string => `planned window ${window.text} (EMR_DOWNTIME)`;

export function createEmrDowntime(deps: { clock: Clock; logger: Logger; windows: readonly DowntimeWindow[] }): EmrDowntime {
  const { clock } = deps;
  const logger = deps.logger.child({ component: 'emr-downtime' });
  const schedule = createDowntimeSchedule(deps.windows);
  let store: EmrDowntimeStore | undefined;
  let rows: EmrDowntimeRows = {};
  /** What current() found, and until when it holds (the state changes only at its end or the next start). */
  let memo: { from: number; to: number; value: PlannedDowntime | undefined } | undefined;
  /** What was last reported in the logs, to log a change once. */
  let logged: string | undefined;

  /** The scheduled window in force at `t`, unless an operator ended it early. */
  function scheduledAt(t: number) {
    const w = schedule.at(t);
    const ended = rows.ended;
    if (w && ended && t < ended.until && w.start <= ended.setAt) return undefined;
    return w;
  }

  function compute(now: number): { value: PlannedDowntime | undefined; to: number } {
    // In force from when it is read (another replica's clock may run a little ahead of this one's) to its end.
    const op = rows.operator && now < rows.operator.until ? rows.operator : undefined;
    const sch = scheduledAt(now);
    if (!op && !sch) {
      const next = schedule.windows.length ? schedule.next(now)?.start : undefined;
      // Until the next window starts (an hour at most, when none is near), or an operator's change.
      return { value: undefined, to: Math.min(next ?? Infinity, now + 3_600_000) };
    }
    let until = Math.max(op?.until ?? 0, sch?.until ?? 0);
    // A scheduled window that starts before the operator's downtime ends carries it on.
    if (op && op.until >= (sch?.until ?? 0)) {
      const after = scheduledAt(op.until);
      if (after) until = Math.max(until, after.until);
    }
    const value: PlannedDowntime = op ? { until, reason: op.reason, source: 'operator' } : { until, reason: scheduledReason(sch!.window), source: 'schedule' };
    return { value, to: until };
  }

  function report(value: PlannedDowntime | undefined): void {
    const key = value && `${value.until}|${value.reason}`;
    if (key === logged) return;
    logged = key;
    if (value) logger.info({ until: toIso(value.until), reason: value.reason, source: value.source }, 'EMR planned downtime: no EMR work until it ends');
    else logger.info('EMR planned downtime over: EMR work resumes once the EMR answers');
  }

  function current(): PlannedDowntime | undefined {
    const now = clock.now();
    if (!memo || now < memo.from || now >= memo.to) {
      const { value, to } = compute(now);
      memo = { from: now, to, value };
      report(value);
    }
    return memo.value;
  }

  async function refresh(): Promise<void> {
    if (!store) return;
    const read = await store.read();
    if (JSON.stringify(read) === JSON.stringify(rows)) return;
    rows = read;
    memo = undefined;
  }

  return {
    current,
    nextScheduled() {
      const next = schedule.next(clock.now());
      return next && { start: next.start, until: next.until, window: next.window.text };
    },
    windows: deps.windows.map((w) => w.text),
    refresh,
    async attachStore(s) {
      store = s;
      await refresh();
    },
    async start(until, reason) {
      if (!store) throw new Error('the downtime store is not attached yet');
      const now = clock.now();
      await store.start({ until, reason, setAt: now }, now);
      rows = await store.read();
      memo = undefined;
      return current()!;
    },
    async end() {
      if (!store) throw new Error('the downtime store is not attached yet');
      const now = clock.now();
      const wasDown = current() !== undefined;
      const sch = scheduledAt(now);
      await store.end(sch ? { until: sch.until, setAt: now } : undefined, now);
      rows = await store.read();
      memo = undefined;
      current();
      return { ended: wasDown };
    },
    watch(everyMs = DOWNTIME_REFRESH_MS) {
      const timer = setInterval(() => {
        refresh().catch((err: unknown) => logger.warn({ err: describeError(err) }, 'planned EMR downtime could not be read; the last one read stands'));
      }, everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

/** `emr_bridge_emr_downtime`: 1 while the EMR is in planned downtime, else 0 (the alert rules stay silent on it). */
export function registerEmrDowntimeMetric(registry: Registry, downtime: Pick<EmrDowntime, 'current'>): void {
  new Gauge({
    name: 'emr_bridge_emr_downtime',
    help: 'Whether the EMR is in planned downtime now (EMR_DOWNTIME or set by an operator): 1 yes, 0 no. No EMR work is done meanwhile.',
    registers: [registry],
    collect() {
      this.set(downtime.current() ? 1 : 0);
    },
  });
}
