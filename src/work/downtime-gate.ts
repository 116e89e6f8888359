// The EMR's incident gate (./incident-gate.ts) with planned downtime in it: the processor and the pusher already
// wait behind that gate while the EMR refuses the adapter, so a planned downtime closes the same gate, and the
// work waits the same way, spending no attempt. While a window is in force nothing is tried and a failure is
// no incident (the EMR is down on purpose). When it ends, the work does not rush a possibly absent EMR: the gate
// stays closed until one probe (the EMR port's ping) answers, then opens for everything at once. An EMR that
// comes back late fails that probe: an outage, reported as one (the dependency status), probed again after
// the incident gate's growing pause, and the work follows the first probe that passes.
import type { Logger } from '../logger.ts';
import type { IncidentGate } from './incident-gate.ts';

export interface DowntimeGate extends IncidentGate {
  /** The end of the planned downtime in force now (epoch ms); undefined when there is none. */
  plannedUntil(): number | undefined;
  /** Resolves when the probe under way (if any) has settled: for tests on a manual clock. */
  probed(): Promise<void>;
}

export function createDowntimeGate(deps: {
  /** The EMR's incident gate, shared by the processor and the pusher. */
  gate: IncidentGate;
  /** The planned downtime in force now (src/status/emr-downtime.ts). */
  downtime: () => { until: number } | undefined;
  /** One call to the EMR that says whether it answers: its port's ping. */
  probe: () => Promise<unknown>;
  /** The EMR answered after a downtime: the work may start at once (the workers' wake). */
  resumed?: () => void;
  logger: Logger;
}): DowntimeGate {
  const { gate, logger } = deps;
  /** A downtime was seen and the EMR has not answered since. */
  let held = false;
  let probing: Promise<void> | undefined;

  function probe(): void {
    if (probing || gate.closed()) return;
    probing = deps
      .probe()
      .then(
        () => {
          held = false;
          gate.passed();
          logger.info('the EMR answers after its planned downtime: EMR work resumes');
          deps.resumed?.();
        },
        () => {
          // Its own failure is reported by the dependency status (an outage now); the next probe waits longer.
          gate.failed();
          logger.warn('the EMR does not answer after its planned downtime ended; EMR work waits for it');
        },
      )
      .finally(() => {
        probing = undefined;
      });
  }

  return {
    closed() {
      if (deps.downtime()) {
        held = true;
        return true;
      }
      if (held) {
        probe();
        return held;
      }
      return gate.closed();
    },
    reopensAt() {
      const d = deps.downtime();
      return d ? d.until : gate.reopensAt();
    },
    failed() {
      // A call that failed as the downtime began is no incident: the EMR is down on purpose.
      if (!deps.downtime()) gate.failed();
    },
    passed() {
      if (!deps.downtime()) held = false;
      gate.passed();
    },
    plannedUntil: () => deps.downtime()?.until,
    probed: () => probing ?? Promise.resolve(),
  };
}
