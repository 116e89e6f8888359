// Intake first (src/work/intake-priority.ts) as gauges, read when /metrics is scraped: the processor's events
// allowed in flight now (PROCESSOR_CONCURRENCY while no webhook arrives, fewer while they do and the event loop
// runs late), and how many windows have lowered it so far.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IntakePriority } from '../work/intake-priority.ts';

export function registerIntakePriorityMetrics(registry: Registry, priority: Pick<IntakePriority, 'limit' | 'lowered'>): void {
  new Gauge({
    name: 'emr_bridge_processor_events_allowed',
    help: 'Events the processor may have in flight now: PROCESSOR_CONCURRENCY, fewer while webhooks queue and the event loop runs late (intake first).',
    registers: [registry],
    collect() {
      this.set(priority.limit());
    },
  });
  let seen = 0;
  new Counter({
    name: 'emr_bridge_processor_gave_way_total',
    help: 'Windows of 50 ms in which the processor lowered its events in flight, webhooks queueing and the event loop late.',
    registers: [registry],
    collect() {
      const now = priority.lowered();
      this.inc(now - seen);
      seen = now;
    },
  });
}
