// The pusher's own metrics: the document outbox by status, read from its store when scraped.
import { Gauge } from 'prom-client';
import type { DocumentStore } from '../storage/documents.ts';
import type { Metrics } from './metrics.ts';

/** emr_bridge_outbox_documents, on `metrics`' registry (nothing without one). */
export function registerPusherMetrics(documents: Pick<DocumentStore, 'countByState'>, metrics: Metrics | undefined): void {
  new Gauge({
    name: 'emr_bridge_outbox_documents',
    help: 'Documents in the outbox, by status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED).',
    labelNames: ['status'] as const,
    registers: metrics ? [metrics.registry] : [],
    async collect() {
      const counts = await documents.countByState();
      this.reset();
      for (const r of counts) this.set({ status: r.state }, r.count);
    },
  });
}
