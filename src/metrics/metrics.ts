// Prometheus metrics of one adapter instance, on a registry of its own (no global default registry,
// so two adapters in one test process do not collide). Parts register further metrics on `registry`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  eventsReceived: Counter<'event_type' | 'duplicate'>;
  eventsRejected: Counter<'reason'>;
  ackLatency: Histogram<never>;
  /**
   * One acknowledged webhook, on the receiver's hot path: counted here by event type and duplicate, and added
   * to eventsReceived when it is read (a scrape), so no request pays prom-client's label hashing; the
   * latency goes to ackLatency.
   */
  webhookAcknowledged(eventType: string, duplicate: boolean, seconds: number): void;
  /** Set the function that reads the inbox depth when scraped (a store's read may be asynchronous). */
  setInboxDepthSource(read: () => number | Promise<number>): void;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  let readDepth: () => number | Promise<number> = () => 0;
  /** Per event type, acknowledged [stored, duplicate] not yet added to the counter. */
  const uncounted = new Map<string, [number, number]>();
  const eventsReceived = new Counter({
    name: 'emr_bridge_webhook_events_received_total',
    help: 'Verified webhook deliveries acknowledged, by event type and whether the eventId was already stored.',
    labelNames: ['event_type', 'duplicate'] as const,
    registers: [registry],
    collect() {
      for (const [eventType, n] of uncounted) {
        if (n[0] > 0) this.inc({ event_type: eventType, duplicate: 'false' }, n[0]);
        if (n[1] > 0) this.inc({ event_type: eventType, duplicate: 'true' }, n[1]);
        n[0] = 0;
        n[1] = 0;
      }
    },
  });
  const eventsRejected = new Counter({
    name: 'emr_bridge_webhook_events_rejected_total',
    help: 'Webhook deliveries refused, by reason (signature failures, oversize bodies, inbox unavailable).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const ackLatency = new Histogram({
    name: 'emr_bridge_webhook_ack_seconds',
    help: 'Time from the start of a webhook request to its acknowledgement, durable write included.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'emr_bridge_inbox_depth',
    help: 'Stored events not yet applied, discarded or dead-lettered (mappings waiting: emr_bridge_mapping_backlog).',
    registers: [registry],
    async collect() {
      this.set(await readDepth());
    },
  });
  return {
    registry,
    eventsReceived,
    eventsRejected,
    ackLatency,
    webhookAcknowledged(eventType, duplicate, seconds) {
      const n = uncounted.get(eventType);
      if (n) n[duplicate ? 1 : 0]++;
      else uncounted.set(eventType, duplicate ? [0, 1] : [1, 0]);
      ackLatency.observe(seconds);
    },
    setInboxDepthSource: (read) => {
      readDepth = read;
    },
  };
}
