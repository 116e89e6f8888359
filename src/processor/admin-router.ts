// Admin routes of the processor (mounted under /admin, behind ADMIN_TOKEN): dead letters listed and
// replayed one by one or in bulk, and the processing state of any stored event.
import Router from '@koa/router';
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { AppError, NotFoundError } from '../errors.ts';
import { readValidated } from '../http/json-body.ts';
import { z } from 'zod';
import type { Logger } from '../logger.ts';
import { createDeadLetters } from './dead-letters.ts';

export function createProcessorAdminRouter(deps: { db: Db; clock: Clock; logger: Logger }): Router {
  const deadLetters = createDeadLetters(deps);
  const router = new Router();
  router.get('/dead-letters', (ctx) => {
    ctx.body = deadLetters.list();
  });
  router.post('/dead-letters/replay', async (ctx) => {
    const body = await readValidated(ctx.req, z.object({ eventType: z.string().min(1).optional() }), 64 * 1024);
    ctx.body = { replayed: deadLetters.replayAll(body.eventType ? { eventType: body.eventType } : {}) };
  });
  router.post('/dead-letters/:eventId/replay', (ctx) => {
    const eventId = ctx.params.eventId!;
    if (!deadLetters.get(eventId)) throw new NotFoundError('no such event');
    if (!deadLetters.replay(eventId)) throw new AppError({ code: 'not_dead_letter', status: 409, message: 'the event is not a dead letter' });
    ctx.body = { replayed: deadLetters.get(eventId) };
  });
  router.get('/events/:eventId', (ctx) => {
    const status = deadLetters.get(ctx.params.eventId!);
    if (!status) throw new NotFoundError('no such event');
    ctx.body = status;
  });
  return router;
}
