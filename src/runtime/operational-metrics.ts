// The metrics an on-call engineer alerts on (docs/alerts.yml), read when scraped: how long the oldest
// unprocessed event, unsent document and undelivered mapping have waited (0 when nothing waits), whether
// each dependency answered its last call, the inbox depth (events only) and the mapping backlog.
import { Gauge } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import type { ProcessorReadings } from '../storage/processing.ts';
import type { Metrics } from '../metrics/metrics.ts';

/** A reading from a store: asynchronous on PostgreSQL, possibly synchronous elsewhere. */
type Reading<T> = () => T | Promise<T>;

export interface OperationalReadings {
  clock: Clock;
  /** Events not yet final, the mapping outbox not included. */
  inboxDepth: Reading<number>;
  /** Mappings waiting to be posted to the service. */
  mappingBacklog: Reading<number>;
  /** Epoch ms of the oldest of each that waits; undefined when none does. */
  oldestUnprocessedEventAt: Reading<number | undefined>;
  oldestUnsentDocumentAt: Reading<number | undefined>;
  oldestUndeliveredMappingAt: Reading<number | undefined>;
  /** Whether each dependency answered its last call. */
  dependencies(): { name: string; ok: boolean }[];
}

export function registerOperationalMetrics(metrics: Metrics, r: OperationalReadings): void {
  const registers = [metrics.registry];
  const ageSeconds = (at: number | undefined) => (at === undefined ? 0 : Math.max(0, (r.clock.now() - at) / 1000));
  const age = (name: string, help: string, read: Reading<number | undefined>) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(ageSeconds(await read()));
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
    async collect() {
      this.set(await r.mappingBacklog());
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

/** The adapter's readings: the processor's stores, its dependency status and the pusher's outbox. */
export function registerAdapterOperationalMetrics(deps: {
  metrics: Metrics;
  readings: ProcessorReadings;
  clock: Clock;
  status: DependencyStatus;
  /** The pusher's outbox (its store): when the oldest queued document entered it. */
  outbox: { oldestQueuedCreatedAt: Reading<number | undefined> };
  databaseWritable: () => boolean;
}): void {
  const { readings } = deps;
  registerOperationalMetrics(deps.metrics, {
    clock: deps.clock,
    inboxDepth: () => readings.depth(),
    mappingBacklog: () => readings.mappingsPending(),
    oldestUnprocessedEventAt: () => readings.oldestOpenReceivedAt(),
    oldestUnsentDocumentAt: () => deps.outbox.oldestQueuedCreatedAt(),
    oldestUndeliveredMappingAt: () => readings.oldestPendingMappingAt(),
    dependencies() {
      // The database is asked now, as GET /admin/status does; the EMR and the service report with every call.
      if (deps.databaseWritable()) deps.status.ok('database');
      else deps.status.failing('database', 'database_unwritable: the inbox cannot take writes');
      return deps.status.components();
    },
  });
}
