// Work that needs a dependency waits while that dependency refuses the adapter as a whole (an incident:
// sign-in refused, a server that is not what we need). One gate per dependency, shared by everything that
// calls it: closed on an incident, it lets one probe through after a growing pause and opens on success.
import type { Clock } from '../clock.ts';
import { backoffDelay, type BackoffSettings } from './backoff.ts';

export interface IncidentGate {
  /** True while work should wait: an incident is on and the next probe is not due yet. */
  closed(): boolean;
  /** When the next probe may run (ms since the epoch); now when open. */
  reopensAt(): number;
  /** An incident error was seen: wait, longer each time it repeats. */
  failed(): void;
  /** A call went through: open. */
  passed(): void;
  /**
   * The end of the planned downtime in force now (epoch ms), when the gate knows of one (./downtime-gate.ts):
   * whatever fails meanwhile waits for its end, spending no attempt.
   */
  plannedUntil?(): number | undefined;
}

/** From one second to a minute between probes: quick to resume once fixed, quiet while broken. */
export const INCIDENT_PROBE_BACKOFF: BackoffSettings = { baseMs: 1_000, maxMs: 60_000 };

export function createIncidentGate(clock: Clock, backoff: BackoffSettings = INCIDENT_PROBE_BACKOFF, random: () => number = Math.random): IncidentGate {
  let failures = 0;
  let until = 0;
  return {
    closed: () => failures > 0 && clock.now() < until,
    reopensAt: () => (failures > 0 ? Math.max(until, clock.now()) : clock.now()),
    failed() {
      // Calls that were in flight together fail together: that is one probe, not several.
      if (failures > 0 && clock.now() < until) return;
      failures++;
      until = clock.now() + backoffDelay(failures, backoff, random);
    },
    passed() {
      failures = 0;
      until = 0;
    },
  };
}
