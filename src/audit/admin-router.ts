// GET /admin/audit (viewer and up): the audit trail, newest first, filtered by actor, action, target and time,
// a page at a time (`before`: the previous page's `nextBefore`). Reading it is not itself recorded.
import Router from '@koa/router';
import { z } from 'zod';
import { toIso } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import { DEFAULT_LIMIT, listParams, toValidationError } from '../http/list-query.ts';
import type { AuditRecord } from '../storage/audit.ts';
import type { Auditor } from './auditor.ts';

const name = z.string().min(1).max(200);

/** GET /admin/audit's parameters. */
export const auditListParams = {
  actor: name.optional(),
  action: name.optional(),
  target: name.optional(),
  since: listParams.since,
  until: listParams.until,
  before: z
    .string()
    .regex(/^[1-9]\d{0,15}$/, "must be an entry id (the previous page's nextBefore)")
    .transform(Number)
    .optional(),
  limit: listParams.limit,
};

/** An entry as the API answers it: the time in ISO 8601. */
export const auditView = (r: AuditRecord) => ({
  id: r.id,
  at: toIso(r.at),
  actor: r.actor,
  door: r.door,
  action: r.action,
  targets: r.targets,
  from: r.from,
  outcome: r.outcome,
});

export function createAuditAdminRouter(deps: { auditor: Auditor }): Router {
  const router = new Router();
  router.get('/audit', async (ctx) => {
    const r = z.strictObject(auditListParams).safeParse(ctx.query);
    if (!r.success) throw toValidationError(r.error.issues[0]!);
    const q = r.data;
    if (q.since !== undefined && q.until !== undefined && q.until <= q.since) throw new ValidationError('until: must be later than since', 'until');
    const page = await deps.auditor.page({
      ...(q.actor ? { actor: q.actor } : {}),
      ...(q.action ? { action: q.action } : {}),
      ...(q.target ? { target: q.target } : {}),
      ...(q.since !== undefined ? { since: q.since } : {}),
      ...(q.until !== undefined ? { until: q.until } : {}),
      ...(q.before !== undefined ? { before: q.before } : {}),
      limit: q.limit ?? DEFAULT_LIMIT,
    });
    ctx.body = { entries: page.entries.map(auditView), nextBefore: page.next };
  });
  return router;
}
