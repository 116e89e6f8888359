// The console's data port (./data.ts) over the adapter's parts: the storage's views of events, documents and
// mappings (refused ones too), the events waiting for a mapping, the dependency status, the metrics; and its
// actions over the same operations as the admin API (src/processor/dead-letters.ts replay, and a refused mapping's
// replay or dismissal; the outbox's resend). Built once in the composition root (src/runtime/adapter-parts.ts).
// Pages are cut by opaque positions (src/http/list-query.ts cursors); a position this port did not give out is a
// ValidationError naming `after`.
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/list-query.ts';
import type { Inbox } from '../inbox/inbox.ts';
import type { Logger } from '../logger.ts';
import type { RecordRefs } from '../emr/refs.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { DeadLetters } from '../processor/dead-letters.ts';
import type { CrosswalkStore } from '../storage/crosswalk.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import { type DocumentStore, isFinal, type OutboxRow, type OutboxState } from '../storage/documents.ts';
import { EVENT_VIEW_STATES, type EventRow, type EventSearch, type EventViewState } from '../storage/event-views.ts';
import type { ProcessorStores } from '../storage/processor-stores.ts';
import type { QuarantineStore } from '../storage/quarantine.ts';
import { traceIdOf } from '../tracing/spans.ts';
import type { ConsoleActions, ConsoleData, DocumentSummary, EventQuery, EventSummary, Page } from './data.ts';
import { readOverview } from './overview.ts';

export interface ConsoleDataDeps {
  processor: Pick<ProcessorStores, 'events' | 'readings' | 'mappingLookup' | 'deadLetters'>;
  documents: Pick<DocumentStore, 'get' | 'history' | 'page' | 'countByState'>;
  status: DependencyStatus;
  database: Pick<Inbox, 'isWritable' | 'writeFailure'>;
  metrics: Pick<Metrics, 'ackLatency'>;
  clock: Clock;
  /** How the EMR names its records: a lookup by EMR reference reads it back. */
  refs: RecordRefs;
  /** The quarantine's count on the overview (src/storage/quarantine.ts). */
  quarantine?: Pick<QuarantineStore, 'usage'>;
  /** The events waiting for a mapping, on the overview (src/storage/crosswalk.ts). */
  crosswalk?: Pick<CrosswalkStore, 'waiting'>;
}

export interface ConsoleActionsDeps {
  deadLetters: Pick<DeadLetters, 'replay' | 'replayAll' | 'replayMapping' | 'dismissMapping'>;
  documents: Pick<DocumentStore, 'get' | 'resend'>;
  logger: Logger;
}

/** Where a page of events ends: the last one shown (by inbox position, newest first). */
export const eventPosition = z.strictObject({ before: z.number().int().positive() });
const documentPosition = z.strictObject({ createdAt: z.number().int(), externalId: z.string() });
/** Where a page of refused mappings ends: the last one shown, as [entityType, serviceId]. */
const mappingPosition = z.tuple([z.string(), z.string()]);

/** A position from a previous page, or a ValidationError naming `after`. */
function positionOf<T>(after: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (after === undefined) return undefined;
  try {
    return decodeCursor(after, schema);
  } catch {
    throw new ValidationError('after: not a position this list gave out', 'after');
  }
}

export const toEventSummary = (r: EventRow): EventSummary => ({
  eventId: r.eventId,
  eventType: r.eventType,
  entityKey: r.entityKey,
  state: r.state,
  attempts: r.attempts,
  receivedAt: r.receivedAt,
  finishedAt: r.finishedAt,
});

const toDocumentSummary = (r: OutboxRow): DocumentSummary => ({
  externalId: r.external_id,
  documentType: r.document_type,
  status: r.state,
  errorCode: r.error_code,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Whether an operator may send the document again: it failed here, before the service took it (the outbox's resend rule). */
export const isRetryable = (r: Pick<OutboxRow, 'state' | 'error_code' | 'request'>): boolean =>
  r.state === 'FAILED' && r.error_code !== null && r.request !== null;

/** The store's search for a console query: one row more than the page, to know whether another follows. */
function eventSearch(q: EventQuery): EventSearch {
  if (q.state !== undefined && !(EVENT_VIEW_STATES as readonly string[]).includes(q.state))
    throw new ValidationError(`state: must be one of ${EVENT_VIEW_STATES.join(', ')}`, 'state');
  return {
    eventId: q.eventId,
    eventType: q.eventType,
    serviceId: q.serviceId,
    state: q.state as EventViewState | undefined,
    since: q.since,
    until: q.until,
    before: positionOf(q.after, eventPosition)?.before,
    limit: q.limit + 1,
  };
}

/** `limit + 1` rows asked for: the page, and where the next one starts (null: none). */
function pageOf<R, T>(rows: R[], limit: number, view: (r: R) => T, position: (last: R) => unknown): Page<T> {
  const shown = rows.slice(0, limit);
  return { rows: shown.map(view), next: rows.length > limit ? encodeCursor(position(shown[shown.length - 1]!)) : null };
}

export function createConsoleData(deps: ConsoleDataDeps): ConsoleData {
  const { events, mappingLookup } = deps.processor;
  const byPosition = (r: EventRow) => ({ before: r.inboxId });
  return {
    overview: () => readOverview(deps),
    async events(q) {
      return pageOf(await events.search(eventSearch(q)), q.limit, toEventSummary, byPosition);
    },
    async event(eventId) {
      const r = await events.get(eventId);
      if (!r) return undefined;
      const traceId = traceIdOf(r.traceContext);
      return {
        ...toEventSummary(r),
        headers: r.headers,
        history: r.history,
        emrRefs: r.emrRefs,
        lastError: r.lastError,
        bodyStored: r.bodyStored,
        ...(traceId ? { traceId } : {}),
      };
    },
    async eventBody(eventId) {
      const body = await events.body(eventId);
      return body ? body.toString('utf8') : null;
    },
    async deadLetters(q) {
      const rows = await events.search(eventSearch({ ...q, state: 'dead' }));
      return pageOf(rows, q.limit, (r) => ({ ...toEventSummary(r), reason: r.lastError }), byPosition);
    },
    async deadMappings(q) {
      const after = positionOf(q.after, mappingPosition) ?? null;
      const rows = await deps.processor.deadLetters.mappings.page({ state: 'dead', after, limit: q.limit + 1 });
      return pageOf(
        rows,
        q.limit,
        (m) => ({ entityType: m.entityType, serviceId: m.serviceId, externalId: m.externalId, attempts: m.attempts, reason: m.lastError ?? null }),
        (last) => [last.entityType, last.serviceId],
      );
    },
    async documents(q) {
      const after = positionOf(q.after, documentPosition);
      const page = await deps.documents.page({ limit: q.limit, ...(after ? { after } : {}), ...(q.status ? { status: q.status as OutboxState } : {}) });
      return { rows: page.rows.map(toDocumentSummary), next: page.next && encodeCursor(page.next) };
    },
    async document(externalId) {
      const row = await deps.documents.get(externalId);
      if (!row) return undefined;
      const history = await deps.documents.history(externalId);
      return {
        ...toDocumentSummary(row),
        serviceId: row.service_id,
        ...(row.document_size != null && row.document_sha256 != null ? { file: { size: row.document_size, sha256: row.document_sha256 } } : {}),
        history: history.map((h) => ({ at: h.at, status: h.status, detail: describeStep(h) })),
        retryable: isRetryable(row),
      };
    },
    async mappings(q) {
      if (q.serviceId) return mappingLookup.byServiceId(q.serviceId);
      if (!q.emrId) return [];
      const { emrId, entityType } = deps.refs.parse(q.emrId);
      return mappingLookup.byEmrId(emrId, entityType);
    },
  };
}

/** A history step's detail as a person reads it: `attempt 2: service_unreachable`. */
function describeStep(h: { attempt: number | null; detail: string | null }): string | null {
  if (h.attempt === null || h.attempt === 0) return h.detail;
  return h.detail ? `attempt ${h.attempt}: ${h.detail}` : `attempt ${h.attempt}`;
}

export function createConsoleActions(deps: ConsoleActionsDeps): ConsoleActions {
  return {
    async replay(eventIds) {
      const replayed: string[] = [];
      const notDead: string[] = [];
      for (const eventId of eventIds) ((await deps.deadLetters.replay(eventId)) ? replayed : notDead).push(eventId);
      return { replayed, notDead };
    },
    async replayAllOfType(eventType) {
      return { events: (await deps.deadLetters.replayAll({ eventType })).events };
    },
    replayMapping: (entityType, serviceId) => deps.deadLetters.replayMapping(entityType, serviceId),
    dismissMapping: (entityType, serviceId, reason, by) => deps.deadLetters.dismissMapping(entityType, serviceId, reason, by),
    async retryDocument(externalId) {
      const row = await deps.documents.get(externalId);
      if (!row) return { ok: false, reason: 'no such document' };
      if (await deps.documents.resend(externalId)) {
        deps.logger.info({ externalId, documentType: row.document_type }, 'document queued again by an operator');
        return { ok: true };
      }
      const final = isFinal(row) ? ' at the service, which is final' : '';
      return { ok: false, reason: `only a document that failed before the service took it can be sent again; this one is ${row.state}${final}` };
    },
  };
}
