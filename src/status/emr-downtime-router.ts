// Planned EMR downtime on the admin API (mounted under /admin): GET /admin/emr/downtime says what is in force
// and what EMR_DOWNTIME plans; POST starts an operator's downtime until a time, with a reason; DELETE ends the
// downtime in force (the EMR is back early). Both changes need an operator and are audited (the role and the
// audit entry are the admin door's: src/access/admin-routes.ts); they are kept in the database, so every
// replica honours them.
import Router from '@koa/router';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { toIso } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import { readValidated } from '../http/json-body.ts';
import { MAX_WINDOW_MS } from '../work/downtime-windows.ts';
import type { EmrDowntime, PlannedDowntime } from './emr-downtime.ts';

/** Largest body these routes read: a time and a reason. */
const SMALL_BODY_BYTES = 16 * 1024;

export const startDowntimeBody = z.strictObject({
  until: z.iso
    .datetime({ offset: true })
    .describe('ISO 8601 date-time with a zone (Z or an offset): when the EMR is expected back. Later than now, within 31 days.'),
  reason: z.string().trim().min(1).max(500).describe('Why (shown on the status page and the console; kept out of the audit trail).'),
});

/** `until` from a POST: an instant later than now and within 31 days, or a ValidationError naming it. */
export function downtimeEnd(until: string, now: number): number {
  const at = Date.parse(until);
  if (!Number.isFinite(at)) throw new ValidationError('until: not an ISO 8601 date-time', 'until');
  if (at <= now) throw new ValidationError(`until: ${until} is not later than now (${toIso(now)})`, 'until');
  if (at - now > MAX_WINDOW_MS) throw new ValidationError('until: more than 31 days from now', 'until');
  return at;
}

export const downtimeView = (d: PlannedDowntime | undefined) => (d ? { until: toIso(d.until), reason: d.reason, source: d.source } : null);

export function createEmrDowntimeAdminRouter(deps: { downtime: EmrDowntime; clock: Clock }): Router {
  const { downtime } = deps;
  const router = new Router();
  router.get('/emr/downtime', async (ctx) => {
    await downtime.refresh();
    const next = downtime.nextScheduled();
    ctx.body = {
      downtime: downtimeView(downtime.current()),
      windows: [...downtime.windows],
      next: next ? { start: toIso(next.start), until: toIso(next.until), window: next.window } : null,
    };
  });
  router.post('/emr/downtime', async (ctx) => {
    const body = await readValidated(ctx.req, startDowntimeBody, SMALL_BODY_BYTES);
    const until = downtimeEnd(body.until, deps.clock.now());
    ctx.body = { downtime: downtimeView(await downtime.start(until, body.reason)) };
  });
  router.delete('/emr/downtime', async (ctx) => {
    await downtime.refresh();
    const { ended } = await downtime.end();
    ctx.body = { ended, downtime: downtimeView(downtime.current()) };
  });
  return router;
}
