// Admin routes of the processor (mounted under /admin, behind ADMIN_TOKEN): dead letters (events and refused
// mappings) listed (a page at a time, filtered), replayed one by one or in bulk, or dismissed with a reason; and
// the processing state of any stored event, with its state history and the EMR records it wrote when given the
// event views.
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError, NotFoundError } from '../errors.ts';
import { actorOf } from '../app/admin-auth.ts';
import { readValidated } from '../http/json-body.ts';
import { decodeCursor, encodeCursor, parseListQuery } from '../http/list-query.ts';
import type { Logger } from '../logger.ts';
import type { DeadLetterStores } from '../storage/dead-letters.ts';
import type { EventViews } from '../storage/event-views.ts';
import { createDeadLetters, deadLetterPosition, type DeadLetters } from './dead-letters.ts';
import { eventDetail } from './events-router.ts';

/** Who dismissed: the credential the request was signed in as (its name, never a person's from patient data). */
const dismissedBy = (ctx: Context): string => actorOf(ctx)?.name ?? 'admin';
/** Largest body these routes read: a reason or a filter, never a document. */
const SMALL_BODY_BYTES = 64 * 1024;

export const dismissBody = z.strictObject({ reason: z.string().trim().min(1).max(500) });
/** POST /admin/dead-letters/replay: every dead letter, or every one of an event type. */
export const replayAllBody = z.strictObject({ eventType: z.string().min(1).optional() });
/** GET /admin/dead-letters: its own parameter besides the shared ones (src/http/list-query.ts). */
export const deadLetterListParams = { state: z.enum(['dead', 'dismissed']).optional() };

const notDeadLetter = (message: string) => new AppError({ code: 'not_dead_letter', status: 409, message });

export function createProcessorAdminRouter(deps: { deadLetters: DeadLetterStores; logger: Logger; events?: Pick<EventViews, 'get'> }): Router {
  const deadLetters = createDeadLetters({ stores: deps.deadLetters, logger: deps.logger });
  const router = new Router();
  router.get('/dead-letters', async (ctx) => {
    ctx.body = await listDeadLetters(deadLetters, ctx.query);
  });
  router.post('/dead-letters/replay', async (ctx) => {
    const body = await readValidated(ctx.req, replayAllBody, SMALL_BODY_BYTES);
    ctx.body = { replayed: await deadLetters.replayAll(body.eventType ? { eventType: body.eventType } : {}) };
  });
  router.post('/dead-letters/mappings/:entityType/:serviceId/replay', async (ctx) => {
    const { entityType, serviceId } = ctx.params as { entityType: string; serviceId: string };
    const mapping = await deadLetters.getMapping(entityType, serviceId);
    if (!mapping) throw new NotFoundError('no such mapping');
    if (!(await deadLetters.replayMapping(entityType, serviceId)))
      throw notDeadLetter(mapping.dismissal ? 'the mapping was dismissed; a dismissed dead letter cannot be replayed' : 'the mapping is not a dead letter');
    ctx.body = { replayed: await deadLetters.getMapping(entityType, serviceId) };
  });
  router.post('/dead-letters/mappings/:entityType/:serviceId/dismiss', async (ctx) => {
    const { entityType, serviceId } = ctx.params as { entityType: string; serviceId: string };
    const { reason } = await readValidated(ctx.req, dismissBody, SMALL_BODY_BYTES);
    const mapping = await deadLetters.getMapping(entityType, serviceId);
    if (!mapping) throw new NotFoundError('no such mapping');
    if (!(await deadLetters.dismissMapping(entityType, serviceId, reason, dismissedBy(ctx))))
      throw notDeadLetter(mapping.dismissal ? 'the mapping is already dismissed' : 'the mapping is not a dead letter');
    ctx.body = { dismissed: await deadLetters.getMapping(entityType, serviceId) };
  });
  router.post('/dead-letters/:eventId/replay', async (ctx) => {
    const eventId = ctx.params.eventId!;
    const event = await deadLetters.get(eventId);
    if (!event) throw new NotFoundError('no such event');
    if (!(await deadLetters.replay(eventId)))
      throw notDeadLetter(
        event.state === 'dismissed' ? 'the event was dismissed; a dismissed dead letter cannot be replayed' : 'the event is not a dead letter',
      );
    ctx.body = { replayed: await deadLetters.get(eventId) };
  });
  router.post('/dead-letters/:eventId/dismiss', async (ctx) => {
    const eventId = ctx.params.eventId!;
    const { reason } = await readValidated(ctx.req, dismissBody, SMALL_BODY_BYTES);
    const event = await deadLetters.get(eventId);
    if (!event) throw new NotFoundError('no such event');
    if (!(await deadLetters.dismiss(eventId, reason, dismissedBy(ctx))))
      throw notDeadLetter(event.state === 'dismissed' ? 'the event is already dismissed' : 'the event is not a dead letter');
    ctx.body = { dismissed: await deadLetters.get(eventId) };
  });
  router.get('/events/:eventId', async (ctx) => {
    const status = await deadLetters.get(ctx.params.eventId!);
    if (!status) throw new NotFoundError('no such event');
    ctx.body = deps.events ? await eventDetail(deps.events, status) : status;
  });
  return router;
}

/** GET /admin/dead-letters: `state` (dead by default, or dismissed) plus the shared list parameters. */
async function listDeadLetters(deadLetters: DeadLetters, query: unknown) {
  const q = parseListQuery(query, deadLetterListParams);
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, deadLetterPosition);
  const page = await deadLetters.page({ state: q.state ?? 'dead', limit: q.limit, after, type: q.type, since: q.since, until: q.until });
  return { events: page.events, mappings: page.mappings, nextCursor: page.next && encodeCursor(page.next) };
}
