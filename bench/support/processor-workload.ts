// The processor benchmarks' shared workload and results (../processor.ts on SQLite, ../processor-postgres.ts on
// PostgreSQL, ../fhir-server.ts): appointment events stored interleaved as they arrive, and a run's rate and CPU.
import { appointmentEvent } from './events.ts';

/** The workload: `appointments` appointments with `eventsPer` events each, stored interleaved (as they arrive). */
export interface Workload {
  appointments: number;
  eventsPer: number;
}
export const WORKLOAD: Workload = { appointments: 200, eventsPer: 10 };
const TYPES = ['appointment.created', 'appointment.rescheduled', 'appointment.payment_updated'];

/** The workload's events in the order they are stored: each round of events over every appointment. */
export function* workloadEvents(workload: Workload, prefix = ''): Generator<Record<string, unknown>> {
  for (let e = 0; e < workload.eventsPer; e++)
    for (let a = 0; a < workload.appointments; a++)
      yield appointmentEvent({
        appointmentId: `${prefix}apt_${a}`,
        eventType: TYPES[Math.min(e, 2)]!,
        occurredAt: new Date(Date.UTC(2026, 0, 1, 0, e)).toISOString(),
        startsAt: new Date(Date.UTC(2026, 1, 1, e)).toISOString(),
      });
}

/** One run's result. */
export interface Run {
  applied: number;
  seconds: number;
  rate: number;
  /** CPU of this process and of the FHIR server process, in µs: steadier than throughput on a shared machine. */
  cpuUs: number;
}

/** The run of median rate (the lower middle one of an even number). */
export const medianRun = (runs: Run[]): Run => [...runs].sort((a, b) => a.rate - b.rate)[Math.floor((runs.length - 1) / 2)]!;

export const total = (runs: Run[]): Run => {
  const applied = runs.reduce((n, r) => n + r.applied, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  return { applied, seconds, rate: applied / seconds, cpuUs: runs.reduce((n, r) => n + r.cpuUs, 0) };
};
