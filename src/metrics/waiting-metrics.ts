// The events waiting for a person to map a record (docs/crosswalk.md), read from the crosswalk when scraped: how
// many wait per entity type (the first record each lacks), and how long the oldest of them has waited (0 when none
// does). docs/alerts.yml alerts on the age: a mapping is a person's work, a ticket, not an outage.
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import { CROSSWALK_ENTITY_TYPES, type WaitingSummary } from '../storage/crosswalk.ts';
import type { Metrics } from './metrics.ts';

export interface WaitingReadings {
  clock: Clock;
  /** The crosswalk store's summary (CrosswalkStore.waiting). */
  waiting(): Promise<WaitingSummary[]>;
}

export function registerWaitingMetrics(metrics: Metrics, r: WaitingReadings): void {
  const registers = [metrics.registry];
  // One read per scrape, shared by both gauges.
  let last: Promise<WaitingSummary[]> | undefined;
  const read = () => {
    last ??= r.waiting().finally(() => {
      last = undefined;
    });
    return last;
  };
  /** Every entity type, those with nothing waiting at 0, so a rule sees a series fall back instead of vanish. */
  const perType = async (value: (s: WaitingSummary | undefined) => number) => {
    const summary = await read();
    return CROSSWALK_ENTITY_TYPES.map((t) => ({ entity_type: t, value: value(summary.find((s) => s.entityType === t)) }));
  };
  new Gauge({
    name: 'emr_bridge_events_waiting',
    help: 'Events waiting for a person to map a record in the crosswalk, by the first record each lacks (patient, doctor, location).',
    labelNames: ['entity_type'] as const,
    registers,
    async collect() {
      for (const { entity_type, value } of await perType((s) => s?.events ?? 0)) this.set({ entity_type }, value);
    },
  });
  new Gauge({
    name: 'emr_bridge_events_waiting_oldest_seconds',
    help: 'How long the oldest event waiting for a mapping of that entity type has waited (0: none waits).',
    labelNames: ['entity_type'] as const,
    registers,
    async collect() {
      const age = (s: WaitingSummary | undefined) => (s?.oldestSince == null ? 0 : Math.max(0, (r.clock.now() - s.oldestSince) / 1000));
      for (const { entity_type, value } of await perType(age)) this.set({ entity_type }, value);
    },
  });
}
