// Planned EMR downtime in the composition root: the EMR port that makes no call while a downtime is in force
// (whoever calls it: the processor and the pusher wait behind their gate already, so this is the backstop), and
// the gate they wait behind (src/work/downtime-gate.ts over the incident gate).
import type { Clock } from '../clock.ts';
import { toIso } from '../clock.ts';
import { EmrError, type EmrPort, LOCAL_PORT_METHODS } from '../emr/index.ts';
import type { Logger } from '../logger.ts';
import type { EmrDowntime } from '../status/emr-downtime.ts';
import { createDowntimeGate, type DowntimeGate } from '../work/downtime-gate.ts';
import { createIncidentGate } from '../work/incident-gate.ts';

/**
 * `port`, whose calls to the EMR fail at once with EmrError `emr_planned_downtime` while a downtime is in force,
 * never reaching it (a dependency status wrapped inside hears nothing of them).
 */
export function withoutCallsDuringDowntime(port: EmrPort, downtime: Pick<EmrDowntime, 'current'>): EmrPort {
  const guarded = { ...port } as Record<string, unknown>;
  for (const [key, value] of Object.entries(port)) {
    if (typeof value !== 'function' || LOCAL_PORT_METHODS.has(key)) continue;
    guarded[key] = (...args: unknown[]) => {
      const d = downtime.current();
      if (d) return Promise.reject(new EmrError('emr_planned_downtime', `the EMR is in planned downtime until ${toIso(d.until)}; not called`));
      return (value as (...a: unknown[]) => unknown).apply(port, args);
    };
  }
  return guarded as unknown as EmrPort;
}

/** The one gate of the EMR shared by the processor and the pusher: incidents and planned downtime. */
export function createEmrGate(deps: {
  clock: Clock;
  emr: Pick<EmrPort, 'ping'>;
  downtime: Pick<EmrDowntime, 'current'>;
  logger: Logger;
  resumed: () => void;
}): DowntimeGate {
  return createDowntimeGate({
    gate: createIncidentGate(deps.clock),
    downtime: () => deps.downtime.current(),
    probe: () => deps.emr.ping(),
    resumed: deps.resumed,
    logger: deps.logger,
  });
}
