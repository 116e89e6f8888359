// Admin routes that read events (under /admin, the viewer role; what the console shows, for integrators too):
// a search by eventId, event type, the entity's serviceId, state and received time, newest first, a page at a
// time, and the events received and applied per minute over the last 24 hours. One event's state, history and
// EMR references are GET /admin/events/:eventId (./admin-router.ts, with eventDetail below). Identifiers,
// states, reasons and times; never bodies.
import Router from '@koa/router';
import { z } from 'zod';
import { type Clock, toIso } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, listParams, toValidationError } from '../http/list-query.ts';
import type { EventStatus } from '../storage/dead-letters.ts';
import { EVENT_VIEW_STATES, type EventHistoryEntry, type EventRow, type EventViews } from '../storage/event-views.ts';
import { lastDayPerMinute } from './per-minute.ts';

/** GET /admin/events: its parameters (after: the previous page's `next`). */
export const eventSearchParams = {
  eventId: z.string().min(1).max(200).optional(),
  eventType: z.string().min(1).max(200).optional(),
  serviceId: z.string().min(1).max(200).optional(),
  state: z.enum(EVENT_VIEW_STATES).optional(),
  since: listParams.since,
  until: listParams.until,
  after: z.string().min(1).max(1000).optional(),
  limit: listParams.limit,
};

const position = z.strictObject({ before: z.number().int().positive() });

function parseSearch(query: unknown) {
  const r = z.strictObject(eventSearchParams).safeParse(query);
  if (!r.success) throw toValidationError(r.error.issues[0]!);
  const q = r.data;
  if (q.since !== undefined && q.until !== undefined && q.until <= q.since) throw new ValidationError('until: must be later than since', 'until');
  return { ...q, before: q.after === undefined ? undefined : positionOf(q.after), limit: q.limit ?? DEFAULT_LIMIT };
}

function positionOf(after: string): number {
  try {
    return decodeCursor(after, position).before;
  } catch {
    throw new ValidationError('after: not a position this list gave out', 'after');
  }
}

/** An event as the search lists it. */
export const eventSummaryView = (r: EventRow) => ({
  eventId: r.eventId,
  eventType: r.eventType,
  entityKey: r.entityKey,
  state: r.state,
  attempts: r.attempts,
  ...(r.lastError ? { lastError: r.lastError } : {}),
  receivedAt: toIso(r.receivedAt),
  ...(r.finishedAt !== null ? { finishedAt: toIso(r.finishedAt) } : {}),
  ...(r.waitingFor ? { waitingFor: r.waitingFor } : {}),
});

export const historyView = (h: EventHistoryEntry) => ({
  at: toIso(h.at),
  state: h.state,
  attempt: h.attempt,
  ...(h.reason !== null ? { reason: h.reason } : {}),
});

/** GET /admin/events/:eventId: the event's processing state, with its history and the EMR records it wrote (as the EMR module names them). */
export async function eventDetail(events: Pick<EventViews, 'get'>, status: EventStatus) {
  const record = await events.get(status.eventId);
  return {
    ...status,
    history: (record?.history ?? []).map(historyView),
    emrRefs: record?.emrRefs ?? [],
    body: record?.bodyStored ? ('stored' as const) : ('pruned' as const),
  };
}

export function createEventsAdminRouter(deps: { events: EventViews; clock: Clock }): Router {
  const router = new Router();
  router.get('/events', async (ctx) => {
    const q = parseSearch(ctx.query);
    const rows = await deps.events.search({ ...q, limit: q.limit + 1 });
    const shown = rows.slice(0, q.limit);
    ctx.body = { events: shown.map(eventSummaryView), next: rows.length > q.limit ? encodeCursor({ before: shown[shown.length - 1]!.inboxId }) : null };
  });
  router.get('/stats/minutes', async (ctx) => {
    const minutes = await lastDayPerMinute(deps.events, deps.clock);
    ctx.body = { minutes: minutes.map((m) => ({ minute: toIso(m.minute), received: m.received, applied: m.applied })) };
  });
  return router;
}
