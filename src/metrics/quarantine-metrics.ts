// The quarantine's metrics (src/receiver/quarantine-intake.ts): signed webhooks over WEBHOOK_MAX_BODY_BYTES kept,
// those refused because the quarantine had no room (a 413, as before the quarantine: the event is lost unless the
// service is asked to send it again), and what it holds now. docs/alerts.yml alerts on these names.
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from './metrics.ts';

export interface QuarantineMetrics {
  /** Kept in the quarantine (a repeat of a kept eventId is not counted). */
  quarantined: Counter<never>;
  /** Signed, over the limit, and refused with 413 because the quarantine had no room for it. */
  full: Counter<never>;
}

export interface QuarantineReadings {
  /** Events held and the bytes of their stored bodies (a store's read). */
  usage(): Promise<{ events: number; bytes: number }>;
  /** WEBHOOK_QUARANTINE_BYTES. */
  capacityBytes: number;
}

/** Registered on `metrics`' registry; without one, counted and never scraped. The gauges read `readings` when scraped. */
export function createQuarantineMetrics(metrics: Metrics | undefined, readings?: QuarantineReadings): QuarantineMetrics {
  const registers = metrics ? [metrics.registry] : [];
  if (readings) {
    // One read per scrape, shared by both gauges.
    let last: Promise<{ events: number; bytes: number }> | undefined;
    const read = () => {
      last ??= readings.usage().finally(() => {
        last = undefined;
      });
      return last;
    };
    new Gauge({
      name: 'emr_bridge_webhook_quarantine_events',
      help: 'Signed webhooks over WEBHOOK_MAX_BODY_BYTES held in the quarantine, waiting for an operator to apply or dismiss them.',
      registers,
      async collect() {
        this.set((await read()).events);
      },
    });
    new Gauge({
      name: 'emr_bridge_webhook_quarantine_bytes',
      help: 'Bytes of the quarantined bodies as stored (sealed), against emr_bridge_webhook_quarantine_capacity_bytes.',
      registers,
      async collect() {
        this.set((await read()).bytes);
      },
    });
    new Gauge({
      name: 'emr_bridge_webhook_quarantine_capacity_bytes',
      help: 'WEBHOOK_QUARANTINE_BYTES: the room of the quarantine.',
      registers,
      collect() {
        this.set(readings.capacityBytes);
      },
    });
  }
  return {
    quarantined: new Counter({
      name: 'emr_bridge_webhook_quarantined_total',
      help: 'Signed webhooks over WEBHOOK_MAX_BODY_BYTES kept in the quarantine and answered 202.',
      registers,
    }),
    full: new Counter({
      name: 'emr_bridge_webhook_quarantine_full_total',
      help: 'Signed webhooks over WEBHOOK_MAX_BODY_BYTES refused with 413 because the quarantine had no room for them.',
      registers,
    }),
  };
}
