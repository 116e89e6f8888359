// The console's overview, read at once from every source: each dependency's state (as GET /admin/status gives
// it, the database asked now), the inbox backlog and its age (received, not yet taken in or not yet final), the
// dead letters (events, and mappings the service refused), the events waiting for a mapping and the oldest's age,
// the documents by status, the webhooks' acknowledgement latency (p50 and p99 from the metrics' histogram
// buckets), the last 24 hours per minute (received: what the inbox stored, every replica's), and the open alerts
// (the dependencies failing now).
import type { Clock } from '../clock.ts';
import type { Inbox } from '../inbox/inbox.ts';
import { bucketsOf, quantileOf } from '../metrics/histogram-quantiles.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { lastDayPerMinute } from '../processor/per-minute.ts';
import { reportDatabase } from '../status/admin-router.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import type { CrosswalkStore } from '../storage/crosswalk.ts';
import type { DocumentStore } from '../storage/documents.ts';
import type { ProcessorStores } from '../storage/processor-stores.ts';
import type { QuarantineStore } from '../storage/quarantine.ts';
import type { ComponentState, Overview } from './data.ts';

export interface OverviewDeps {
  processor: Pick<ProcessorStores, 'events' | 'readings' | 'deadLetters'>;
  documents: Pick<DocumentStore, 'countByState'>;
  status: DependencyStatus;
  database: Pick<Inbox, 'isWritable' | 'writeFailure'>;
  metrics: Pick<Metrics, 'ackLatency'>;
  clock: Clock;
  /** The quarantine's count of waiting webhooks, when there is one. */
  quarantine?: Pick<QuarantineStore, 'usage'>;
  /** The crosswalk's waiting events, counted by the first record each lacks (so each event once). */
  crosswalk?: Pick<CrosswalkStore, 'waiting'>;
}

/** p50 and p99 of the acknowledgement latency, in ms; null before the first webhook. */
export async function ackLatencyMs(metrics: Pick<Metrics, 'ackLatency'>): Promise<Overview['ackLatencyMs']> {
  const buckets = await bucketsOf(metrics.ackLatency);
  const p50 = quantileOf(buckets, 0.5);
  const p99 = quantileOf(buckets, 0.99);
  return p50 === null || p99 === null ? null : { p50: p50 * 1000, p99: p99 * 1000 };
}

function components(deps: Pick<OverviewDeps, 'status' | 'database'>): ComponentState[] {
  reportDatabase(deps.status, deps.database);
  return deps.status.components().map((c) => ({
    name: c.name,
    ok: c.ok,
    ...(c.reason !== null ? { reason: c.reason } : {}),
    since: Date.parse(c.since),
    ...(c.downtime ? { downtime: { until: Date.parse(c.downtime.until), reason: c.downtime.reason } } : {}),
  }));
}

/** Every entity type's waiting events together, and the oldest of them. */
async function waitingOf(crosswalk: Pick<CrosswalkStore, 'waiting'>, clock: Clock): Promise<NonNullable<Overview['waiting']>> {
  const byType = await crosswalk.waiting();
  const since = byType.map((w) => w.oldestSince).filter((s): s is number => s !== null);
  const oldestSince = since.length ? Math.min(...since) : null;
  return {
    events: byType.reduce((n, w) => n + w.events, 0),
    oldestSince,
    ageMs: oldestSince === null ? null : Math.max(0, clock.now() - oldestSince),
  };
}

export async function readOverview(deps: OverviewDeps): Promise<Overview> {
  const { events, readings, deadLetters: parked } = deps.processor;
  const [inboxDepth, oldest, deadLetters, deadMappings, byState, ackLatency, perMinute] = await Promise.all([
    readings.depth(),
    readings.oldestOpenReceivedAt(),
    events.deadCount(),
    parked.mappings.deadCount(),
    deps.documents.countByState(),
    ackLatencyMs(deps.metrics),
    lastDayPerMinute(events, deps.clock),
  ]);
  const now = components(deps);
  const quarantined = deps.quarantine ? (await deps.quarantine.usage()).events : undefined;
  const waiting = deps.crosswalk ? await waitingOf(deps.crosswalk, deps.clock) : undefined;
  return {
    components: now,
    inboxDepth,
    inboxOldestAt: oldest ?? null,
    inboxAgeMs: oldest === undefined ? null : Math.max(0, deps.clock.now() - oldest),
    deadLetters,
    ...(waiting ? { waiting } : {}),
    ...(quarantined !== undefined ? { quarantined } : {}),
    deadMappings,
    documentsByStatus: Object.fromEntries(byState.map((s) => [s.state, s.count])),
    ackLatencyMs: ackLatency,
    perMinute,
    openAlerts: now.filter((c) => !c.ok),
  };
}
