// The metrics an on-call engineer alerts on (docs/alerts.yml), read when scraped: how long the oldest
// unprocessed event, unsent document and undelivered mapping have waited (0 when nothing waits), whether
// each dependency answered its last call, the inbox depth (events only) and the mapping backlog.
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { createMappingBacklog } from '../mappings/outbox.ts';
import { createQueueReadings } from '../processor/queue.ts';
import type { Outbox } from '../pusher/outbox.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import type { Metrics } from './metrics.ts';

export interface OperationalReadings {
  clock: Clock;
  /** Events not yet final, the mapping outbox not included. */
  inboxDepth(): number;
  /** Mappings waiting to be posted to the service. */
  mappingBacklog(): number;
  /** Epoch ms of the oldest of each that waits; undefined when none does. */
  oldestUnprocessedEventAt(): number | undefined;
  oldestUnsentDocumentAt(): number | undefined;
  oldestUndeliveredMappingAt(): number | undefined;
  /** Whether each dependency answered its last call. */
  dependencies(): { name: string; ok: boolean }[];
}

export function registerOperationalMetrics(metrics: Metrics, r: OperationalReadings): void {
  const registers = [metrics.registry];
  const ageSeconds = (at: number | undefined) => (at === undefined ? 0 : Math.max(0, (r.clock.now() - at) / 1000));
  const age = (name: string, help: string, read: () => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(ageSeconds(read()));
      },
    });
  age(
    'emr_bridge_oldest_unprocessed_event_age_seconds',
    'Age of the oldest stored event not yet applied, discarded or dead-lettered (0: none waits).',
    r.oldestUnprocessedEventAt,
  );
  age(
    'emr_bridge_oldest_unsent_document_age_seconds',
    'Age of the oldest queued outbox document, from when it entered the outbox (0: none waits).',
    r.oldestUnsentDocumentAt,
  );
  age(
    'emr_bridge_oldest_undelivered_mapping_age_seconds',
    'Age of the oldest mapping not yet posted to the service (0: none waits).',
    r.oldestUndeliveredMappingAt,
  );
  new Gauge({
    name: 'emr_bridge_mapping_backlog',
    help: 'Mappings waiting to be posted to the service (not counted in emr_bridge_inbox_depth).',
    registers,
    collect() {
      this.set(r.mappingBacklog());
    },
  });
  new Gauge({
    name: 'emr_bridge_dependency_up',
    help: 'Whether the dependency (emr, service, database) answered the last call made to it: 1 yes, 0 no.',
    labelNames: ['dependency'] as const,
    registers,
    collect() {
      for (const d of r.dependencies()) this.set({ dependency: d.name }, d.ok ? 1 : 0);
    },
  });
  metrics.setInboxDepthSource(r.inboxDepth);
}

/** The adapter's readings: its database, its dependency status and the pusher's outbox. */
export function registerAdapterOperationalMetrics(deps: {
  metrics: Metrics;
  db: Db;
  clock: Clock;
  status: DependencyStatus;
  outbox: Pick<Outbox, 'oldestQueuedCreatedAt'>;
  databaseWritable: () => boolean;
}): void {
  const queue = createQueueReadings(deps.db);
  const mappings = createMappingBacklog(deps.db);
  registerOperationalMetrics(deps.metrics, {
    clock: deps.clock,
    inboxDepth: queue.depth,
    mappingBacklog: mappings.pending,
    oldestUnprocessedEventAt: queue.oldestOpenReceivedAt,
    oldestUnsentDocumentAt: deps.outbox.oldestQueuedCreatedAt,
    oldestUndeliveredMappingAt: mappings.oldestPendingCreatedAt,
    dependencies() {
      // The database is asked now, as GET /admin/status does; the EMR and the service report with every call.
      if (deps.databaseWritable()) deps.status.ok('database');
      else deps.status.failing('database', 'database_unwritable: the inbox cannot take writes');
      return deps.status.components();
    },
  });
}
