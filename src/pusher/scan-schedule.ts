// When the EMR is scanned: once at start, then on PUSHER_SCAN_CRON (node-cron), in the background, each
// scan behind the shared EMR gate (skipped while an incident is on: the dependency status has said so
// once) and in one replica at a time (skipped while another one scans: the coordination's 'emr-scan').
// stop() ends the schedule and waits for a scan in flight.
import cron, { type ScheduledTask } from 'node-cron';
import { describeError, isIncident } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Coordination } from '../storage/coordination.ts';
import type { IncidentGate } from '../work/incident-gate.ts';
import type { Scanner } from './scan.ts';

export interface ScanSchedule {
  /** One scan of the EMR, now; 0 while an EMR incident is on or another replica scans. Returns how many new documents entered the outbox. */
  scanOnce(): Promise<number>;
  /** Scans now and on the schedule. */
  start(cronExpression: string): void;
  /** Ends the schedule and waits for a scan in flight. */
  stop(): Promise<void>;
}

export function createScanSchedule(deps: {
  scanner: Scanner;
  emrGate: IncidentGate;
  coordination: Pick<Coordination, 'exclusive'>;
  logger: Logger;
}): ScanSchedule {
  const { emrGate, logger } = deps;
  let task: ScheduledTask | undefined;
  let scanning: Promise<unknown> = Promise.resolve();

  async function scanOnce(): Promise<number> {
    if (emrGate.closed()) return 0;
    try {
      const added = await deps.coordination.exclusive('emr-scan', () => deps.scanner.scanOnce());
      // Another replica is scanning: nothing was asked of the EMR here.
      if (added === undefined) return 0;
      emrGate.passed();
      return added;
    } catch (err) {
      if (isIncident(err)) emrGate.failed();
      throw err;
    }
  }

  function scanInBackground(): void {
    scanning = scanOnce().catch((err: unknown) => {
      if (!isIncident(err)) logger.warn({ err: describeError(err) }, 'EMR document scan failed');
    });
  }

  return {
    scanOnce,
    start(cronExpression) {
      task = cron.schedule(cronExpression, scanInBackground);
      scanInBackground();
    },
    async stop() {
      await task?.stop();
      await scanning;
    },
  };
}
