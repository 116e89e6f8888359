// What the operator console and the admin API read of events, engine-neutral: a search (by eventId, event
// type, the entity's serviceId, state and received time, newest first, a page at a time by inbox position),
// one event with its headers, its state history and the EMR records it wrote, its stored body (the caller
// checks the role and records the reveal), and the events received and applied per minute. The history rows
// are written with each change (./processing.ts commit, intake, ./dead-letters.ts replay and dismissal); the
// first step, received, is the inbox row's received time.
// Implementations: ./sqlite/event-views.ts, ./postgres/event-views.ts.
import type { EventState } from './processing.ts';

/** What an event's history records: received (at intake, stamped with its received time), then each change. */
export type EventHistoryState = 'received' | 'retrying' | 'waiting' | 'waiting_for_mapping' | 'applied' | 'discarded_stale' | 'dead' | 'replayed' | 'dismissed';

export interface EventHistoryEntry {
  /** Epoch ms. */
  at: number;
  state: EventHistoryState;
  /** The attempt the change ended (0: none yet, or a fresh start after a replay). */
  attempt: number;
  /** Code and message of a failure, or a dismissal's reason; null otherwise. */
  reason: string | null;
}

/** An event's processing state: 'received' while it is not taken in yet. */
export type EventViewState = EventState | 'received';

export interface EventSearch {
  eventId?: string;
  eventType?: string;
  /** The serviceId of the entity the event is about (its entity key names it). */
  serviceId?: string;
  state?: EventViewState;
  /** Epoch ms, on when received: since inclusive, until exclusive. */
  since?: number;
  until?: number;
  /** Only events before this inbox position (the last of the previous page); none: from the newest. */
  before?: number;
  limit: number;
}

export interface EventRow {
  /** The inbox position: pages are cut by it. */
  inboxId: number;
  eventId: string;
  eventType: string;
  entityKey: string | null;
  state: EventViewState;
  attempts: number;
  lastError: string | null;
  /** Epoch ms. */
  receivedAt: number;
  finishedAt: number | null;
  /** A waiting event: the first record it lacks, in the order patient, doctor, location. */
  waitingFor?: { entityType: string; serviceId: string };
}

export interface EventRecord extends EventRow {
  /** The X-Service-* headers as received. */
  headers: Record<string, string>;
  /** The EMR records the event wrote or claimed when it was applied, as the EMR names them (`Patient/12`); empty before. */
  emrRefs: string[];
  bodyStored: boolean;
  /** Oldest first. */
  history: EventHistoryEntry[];
  /** The receipt's trace context (W3C traceparent) when tracing was on: the console shows its trace id. */
  traceContext: string | null;
}

export interface MinuteCounts {
  /** Epoch ms of the minute's start. */
  minute: number;
  received: number;
  applied: number;
}

export interface EventViews {
  /** Events matching every filter given, newest first, `limit` at most. */
  search(q: EventSearch): Promise<EventRow[]>;
  get(eventId: string): Promise<EventRecord | undefined>;
  /**
   * The stored body, opened (sealed at rest); null once retention pruned it; undefined when there is no such
   * event. Rejects with the sealing error (naming the key id) when it does not open.
   */
  body(eventId: string): Promise<Buffer | null | undefined>;
  /**
   * Per minute with anything in [since, until) (epoch ms, minute starts), oldest first; minutes with nothing are
   * left out. Received: inbox rows stored (acknowledged) in the minute, taken in by the processor or not.
   */
  perMinute(since: number, until: number): Promise<MinuteCounts[]>;
  /** Dead letters (events) waiting for a person. */
  deadCount(): Promise<number>;
}

/** The entity keys an event about `serviceId` may carry (src/contract/stored-event.ts entityKeyOf). */
export const entityKeysOf = (serviceId: string): string[] => ['appointment', 'patient', 'document'].map((t) => `${t}:${serviceId}`);

/** The columns both engines select for an EventRow. */
/** Every event, taken in or not: the inbox row with its processing row when there is one. */
export const EVENTS_FROM = 'FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id';

export const EVENT_ROW_COLUMNS = `e.id AS inbox_id, e.event_id, e.event_type, e.received_at, p.entity_key, p.state, p.attempts, p.last_error, p.finished_at,
  CASE WHEN p.state = 'waiting' THEN (SELECT w.entity_type || ':' || w.service_id FROM crosswalk_waits w WHERE w.inbox_id = p.inbox_id ORDER BY w.ord LIMIT 1) END AS waiting_for`;

export interface EventRowColumns {
  inbox_id: number;
  event_id: string;
  event_type: string;
  received_at: number;
  entity_key: string | null;
  state: EventState | null;
  attempts: number | null;
  last_error: string | null;
  finished_at: number | null;
  /** `doctor:doc_1`: a waiting event's first lacked record. */
  waiting_for?: string | null;
}

/** An event_history row as both engines read it. */
export interface HistoryRowColumns {
  at: number;
  state: EventHistoryState;
  attempt: number;
  reason: string | null;
  emr_refs: string | null;
}

/** The columns both engines read for one event (besides its history). */
export const EVENT_RECORD_COLUMNS = `${EVENT_ROW_COLUMNS}, e.headers, e.body IS NOT NULL AS body_stored, e.trace_context`;

/** One event: its row, its received step and later ones, and the references of its latest application. */
export function toEventRecord(
  r: EventRowColumns & { headers: string; body_stored: number | boolean; trace_context?: string | null },
  rows: readonly HistoryRowColumns[],
): EventRecord {
  const row = toEventRow(r);
  const applied = rows.findLast((h) => h.state === 'applied');
  return {
    ...row,
    headers: JSON.parse(r.headers) as Record<string, string>,
    emrRefs: applied?.emr_refs ? applied.emr_refs.split(' ') : [],
    bodyStored: r.body_stored === true || r.body_stored === 1,
    history: [
      { at: row.receivedAt, state: 'received', attempt: 0, reason: null },
      ...rows.map((h) => ({ at: Number(h.at), state: h.state, attempt: h.attempt, reason: h.reason })),
    ],
    traceContext: r.trace_context ?? null,
  };
}

export const toEventRow = (r: EventRowColumns): EventRow => ({
  inboxId: Number(r.inbox_id),
  eventId: r.event_id,
  eventType: r.event_type,
  entityKey: r.entity_key,
  state: r.state ?? 'received',
  attempts: r.attempts ?? 0,
  lastError: r.last_error,
  receivedAt: Number(r.received_at),
  finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  ...(r.waiting_for ? { waitingFor: waitingForOf(r.waiting_for) } : {}),
});

/** `doctor:doc_1` as the record it names (a service id may itself hold a colon). */
function waitingForOf(key: string): { entityType: string; serviceId: string } {
  const at = key.indexOf(':');
  return { entityType: key.slice(0, at), serviceId: key.slice(at + 1) };
}

/**
 * Received and applied per minute in [since, until) (minute starts): one query over two indexes, each read alone.
 * Received is what the receiver acknowledged: inbox rows by their received time, counted per minute by the inbox
 * in its own commits (inbox_minutes, its primary key; on PostgreSQL one row per minute and backend, every replica's),
 * whether the processor has taken them in or not. Applied is by processing_finished (covering); an event replayed
 * and applied again counts at its last application.
 */
export const perMinuteSql = (since: string, until: string) => `
  SELECT minute, CAST(sum(received) AS BIGINT) AS received, CAST(sum(applied) AS BIGINT) AS applied FROM (
    SELECT minute, received, 0 AS applied FROM inbox_minutes
    WHERE minute >= ${since} AND minute < ${until}
    UNION ALL
    SELECT (finished_at / 60000) * 60000, 0, 1 FROM processing
    WHERE state IN ('applied', 'discarded_stale') AND finished_at >= ${since} AND finished_at < ${until} AND state = 'applied'
  ) AS counted GROUP BY minute ORDER BY minute`;

/** The states a search may name, as written into the SQL (anything else is refused before it gets there). */
export const EVENT_VIEW_STATES = [
  'received',
  'pending',
  'retrying',
  'waiting',
  'applied',
  'discarded_stale',
  'dead',
  'dismissed',
] as const satisfies readonly EventViewState[];

/**
 * The search's SQL for the filters given, without its LIMIT (each engine numbers the placeholders its own way).
 * A filter on the processing row (serviceId, a state) reads processing newest first and finds each inbox row by
 * its key: processing rows are small, inbox rows carry bodies. Otherwise the inbox is read newest first.
 */
export function searchSql(q: EventSearch, placeholder: () => string): { sql: string; params: unknown[] } {
  const terms: string[] = [];
  const params: unknown[] = [];
  const term = (sql: (p: () => string) => string, ...values: unknown[]) => {
    terms.push(sql(placeholder));
    params.push(...values);
  };
  const byProcessing = q.serviceId !== undefined || (q.state !== undefined && q.state !== 'received');
  const key = byProcessing ? 'p.inbox_id' : 'e.id';
  if (q.eventId !== undefined) term((p) => `e.event_id = ${p()}`, q.eventId);
  if (q.eventType !== undefined) term((p) => `e.event_type = ${p()}`, q.eventType);
  if (q.serviceId !== undefined) term((p) => `p.entity_key IN (${p()}, ${p()}, ${p()})`, ...entityKeysOf(q.serviceId));
  // The state written out, not bound: only then can SQLite use its partial indexes (processing_dead, ...).
  if (q.state === 'received') terms.push('p.inbox_id IS NULL');
  else if (q.state !== undefined) {
    if (!(EVENT_VIEW_STATES as readonly string[]).includes(q.state)) throw new Error(`not an event state: ${String(q.state).slice(0, 40)}`);
    terms.push(`p.state = '${q.state}'`);
  }
  if (q.since !== undefined) term((p) => `e.received_at >= ${p()}`, q.since);
  if (q.until !== undefined) term((p) => `e.received_at < ${p()}`, q.until);
  if (q.before !== undefined) term((p) => `${key} < ${p()}`, q.before);
  const from = byProcessing ? 'FROM processing p JOIN inbox_events e ON e.id = p.inbox_id' : EVENTS_FROM;
  return { sql: `SELECT ${EVENT_ROW_COLUMNS} ${from} ${terms.length ? `WHERE ${terms.join(' AND ')}` : ''} ORDER BY ${key} DESC`, params };
}
