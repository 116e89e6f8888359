// The processor's own metrics: the incidents that need a person (dead-lettered events, refused mappings) and
// the events that reached a final state. docs/alerts.yml alerts on these names and labels.
import { Counter } from 'prom-client';
import type { Metrics } from './metrics.ts';

export interface ProcessorMetrics {
  /** By kind: 'event' (dead-lettered) or 'mapping' (refused by the service). */
  alerts: Counter<'kind'>;
  /** By final state. */
  outcomes: Counter<'state'>;
}

/** Registered on `metrics`' registry; without one, counted and never scraped. */
export function createProcessorMetrics(metrics: Metrics | undefined): ProcessorMetrics {
  const registers = metrics ? [metrics.registry] : [];
  return {
    alerts: new Counter({
      name: 'emr_bridge_processor_alerts_total',
      help: 'Incidents that need a person: dead-lettered events and refused mappings.',
      labelNames: ['kind'] as const,
      registers,
    }),
    outcomes: new Counter({
      name: 'emr_bridge_processor_events_total',
      help: 'Events that reached a final state, by state.',
      labelNames: ['state'] as const,
      registers,
    }),
  };
}
