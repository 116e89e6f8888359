// The EMR calls' adaptive limit (src/work/adaptive-limit.ts) as gauges, read when /metrics is scraped: the
// limit now (EMR_MAX_CONCURRENCY while the EMR keeps up, lower while it pushes back) and the calls in flight.
import { Gauge, type Registry } from 'prom-client';
import type { AdaptiveLimit } from '../work/adaptive-limit.ts';

export function registerEmrCallsMetrics(registry: Registry, limit: Pick<AdaptiveLimit, 'limit' | 'inFlight'>): void {
  new Gauge({
    name: 'emr_bridge_emr_concurrency',
    help: 'EMR calls allowed in flight now: EMR_MAX_CONCURRENCY, halved when the EMR pushes back (429, 503 with Retry-After) or its latency climbs, raised again as it recovers.',
    registers: [registry],
    collect() {
      this.set(limit.limit());
    },
  });
  new Gauge({
    name: 'emr_bridge_emr_calls_in_flight',
    help: 'EMR calls in flight now (never more than emr_bridge_emr_concurrency).',
    registers: [registry],
    collect() {
      this.set(limit.inFlight());
    },
  });
}
