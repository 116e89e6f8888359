// Admin routes of the quarantine (mounted under /admin): what it holds, a page at a time (quarantined by default,
// or applied or dismissed ones), with its room; apply one (into the inbox, once, after WEBHOOK_MAX_BODY_BYTES has
// been raised so it fits) or dismiss one with a reason, as a dead letter's. Apply and dismiss need the operator
// role and are audited (src/access/admin-routes.ts). Identifiers, sizes and times only, never a body.
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { actorOf } from '../app/admin-auth.ts';
import { readValidated } from '../http/json-body.ts';
import { decodeCursor, encodeCursor, parseListQuery } from '../http/list-query.ts';
import { QUARANTINE_STATES, type QuarantineState } from '../storage/quarantine.ts';
import type { Quarantine, QuarantinedEvent } from './quarantine.ts';

/** Who acted: the credential the request was signed in as. */
const actor = (ctx: Context): string => actorOf(ctx)?.name ?? 'admin';
const SMALL_BODY_BYTES = 64 * 1024;

/** POST /admin/quarantine/{eventId}/dismiss: as a dead letter's dismissal. */
export const quarantineDismissBody = z.strictObject({ reason: z.string().trim().min(1).max(500) });
/** GET /admin/quarantine: its own parameter besides the shared ones (src/http/list-query.ts). */
export const quarantineListParams = { state: z.enum(QUARANTINE_STATES as [QuarantineState, ...QuarantineState[]]).optional() };
const position = z.strictObject({ after: z.number().int().nonnegative() });

/** What the admin API shows of a quarantined event. */
export const quarantinedView = (e: QuarantinedEvent, maxBodyBytes: number) => ({
  eventId: e.eventId,
  eventType: e.eventType,
  size: e.size,
  fitsLimit: e.size <= maxBodyBytes,
  receivedAt: new Date(e.receivedAt).toISOString(),
  state: e.state,
  ...(e.applied ? { applied: { by: e.applied.by, at: new Date(e.applied.at).toISOString() } } : {}),
  ...(e.dismissal ? { dismissal: e.dismissal } : {}),
});

export function createQuarantineAdminRouter(deps: { quarantine: Quarantine }): Router {
  const { quarantine } = deps;
  const view = (e: QuarantinedEvent) => quarantinedView(e, quarantine.maxBodyBytes);
  const router = new Router();
  router.get('/quarantine', async (ctx) => {
    const q = parseListQuery(ctx.query, quarantineListParams);
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, position).after;
    const [page, usage] = await Promise.all([
      quarantine.page({ state: q.state ?? 'quarantined', limit: q.limit, after, type: q.type, since: q.since, until: q.until }),
      quarantine.usage(),
    ]);
    ctx.body = {
      events: page.events.map(view),
      nextCursor: page.next === null ? null : encodeCursor({ after: page.next }),
      quarantine: { events: usage.events, bytes: usage.bytes, capacityBytes: quarantine.capacityBytes },
      maxBodyBytes: quarantine.maxBodyBytes,
    };
  });
  router.post('/quarantine/:eventId/apply', async (ctx) => {
    const r = await quarantine.apply(ctx.params.eventId!, actor(ctx));
    ctx.body = { applied: view(r.event), inbox: r.inbox };
  });
  router.post('/quarantine/:eventId/dismiss', async (ctx) => {
    const { reason } = await readValidated(ctx.req, quarantineDismissBody, SMALL_BODY_BYTES);
    ctx.body = { dismissed: view(await quarantine.dismiss(ctx.params.eventId!, reason, actor(ctx))) };
  });
  return router;
}
