// Planned EMR downtime: what is in force, what EMR_DOWNTIME plans, and two buttons, each through a confirmation
// page (a GET that changes nothing; a viewer is refused there, audited `denied`) and then a POST with the CSRF
// token: start a downtime until a time (UTC) with a reason, audited `emr_downtime.start` (the time, never the
// reason), or end the one in force, audited `emr_downtime.end`. The same operations as POST and DELETE
// /admin/emr/downtime; kept in the database, so every replica honours them.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ConsoleContext } from '../deps.ts';
import { csrfField } from '../csrf.ts';
import { ConsolePageError } from '../errors.ts';
import { duration, parseTimeInput, timeInputValue, when } from '../format.ts';
import { param } from '../form.ts';
import { consoleAction, mustBeAllowed, redirectWith, sendPage, sessionOf } from '../guard.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';

export const DOWNTIME_PAGE = '/console/emr-downtime';
/** The longest downtime the console starts (as the admin API: 31 days). */
const MAX_MS = 31 * 24 * 3_600_000;
const reasonText = z.string().trim().min(1).max(500);

/** The downtime in force as one line: "EMR downtime until 2026-03-08 09:00:00Z, EMR upgrade". */
export function downtimeLine(d: { until: number; reason: string }): Html {
  return html`EMR downtime until ${when(d.until)}, ${d.reason}`;
}

/** A start asked for: until (UTC) later than now and within 31 days, and a reason; else a 400 page saying why. */
function startOf(c: ConsoleContext, untilText: string | null | undefined, reasonInput: string | null | undefined): { until: number; reason: string } {
  const until = parseTimeInput(untilText ?? undefined);
  const now = c.clock.now();
  if (until === undefined) throw new ConsolePageError(400, 'No end time', 'Give the time the EMR is expected back (UTC), e.g. 2026-03-08T09:00.');
  if (until <= now) throw new ConsolePageError(400, 'End time passed', 'The end time must be later than now (times are UTC).');
  if (until - now > MAX_MS) throw new ConsolePageError(400, 'Too long', 'A planned downtime lasts 31 days at most.');
  const reason = reasonText.safeParse(reasonInput ?? '');
  if (!reason.success) throw new ConsolePageError(400, 'No reason', 'Say why the EMR is down (500 characters at most): it is shown to everyone who looks.');
  return { until, reason: reason.data };
}

function confirmPage(ctx: Context, title: string, what: Html, action: string, hidden: Html, label: string): void {
  ctx.type = 'html';
  ctx.body = renderPage({
    title,
    session: sessionOf(ctx),
    current: 'overview',
    body: html`<form class="card narrow confirm" method="post" action="${action}">${what}${hidden}${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">${label}</button> <a href="${DOWNTIME_PAGE}">Cancel</a></div></form>`,
  });
}

async function statePage(c: ConsoleContext, ctx: Context): Promise<void> {
  const downtime = c.emrDowntime!;
  await downtime.refresh();
  const now = downtime.current();
  const next = downtime.nextScheduled();
  const windows = downtime.windows;
  const defaultUntil = timeInputValue(c.clock.now() + 2 * 3_600_000);
  await sendPage(c, ctx, {
    title: 'EMR downtime',
    current: 'overview',
    body: html`<section class="card" aria-labelledby="now-h"><h2 id="now-h">Now</h2>
${
  now
    ? html`<p class="notice" id="emr-downtime" role="status">${downtimeLine(now)}</p>
<p>No EMR work is done until then: events and documents wait, spending no attempt. Webhooks are still taken.</p>
<p><a class="button" id="end-downtime" href="${DOWNTIME_PAGE}/confirm-end">End the downtime…</a></p>`
    : html`<p id="no-downtime">The EMR is not in planned downtime.</p>`
}
</section>
<div class="grid">
<form class="card narrow" method="get" action="${DOWNTIME_PAGE}/confirm" aria-labelledby="start-h"><h2 id="start-h">Start a downtime now</h2>
<div class="field"><label for="until">Until (UTC)</label><input id="until" name="until" type="datetime-local" required value="${defaultUntil}"></div>
<div class="field"><label for="reason">Reason</label><input id="reason" name="reason" required maxlength="500" placeholder="EMR upgrade"></div>
<div class="actions"><button type="submit" id="start-downtime">Start the downtime…</button></div></form>
<section class="card" aria-labelledby="planned-h"><h2 id="planned-h">Planned windows (EMR_DOWNTIME)</h2>
${windows.length ? html`<ul class="ids">${windows.map((w) => html`<li><code>${w}</code></li>`)}</ul>` : html`<p class="muted">None configured.</p>`}
${next ? html`<p id="next-window">Next: ${when(next.start)} to ${when(next.until)}.</p>` : ''}
</section>
</div>`,
  });
}

export function registerEmrDowntime(router: Router, c: ConsoleContext): void {
  if (!c.emrDowntime) return;
  const downtime = c.emrDowntime;
  router.get('/emr-downtime', (ctx) => statePage(c, ctx));
  router.get('/emr-downtime/confirm', async (ctx) => {
    const untilText = param(ctx, 'until');
    await mustBeAllowed(c, ctx, 'emr_downtime.start', 'operator', [], 'Starting an EMR downtime');
    const { until, reason } = startOf(c, untilText, param(ctx, 'reason'));
    const what = html`<p>Start a planned EMR downtime now, until ${when(until)} (${duration(until - c.clock.now())} from now)?</p>
<p>Reason: ${reason}</p>
<p>No EMR work is done until then (no event or document work, no readiness ping, no scan), and no incident is raised. Every replica honours it.</p>`;
    const hidden = html`<input type="hidden" name="until" value="${new Date(until).toISOString()}"><input type="hidden" name="reason" value="${reason}">`;
    confirmPage(ctx, 'Confirm the EMR downtime', what, `${DOWNTIME_PAGE}/start`, hidden, 'Start the downtime');
  });
  router.get('/emr-downtime/confirm-end', async (ctx) => {
    await mustBeAllowed(c, ctx, 'emr_downtime.end', 'operator', [], 'Ending an EMR downtime');
    await downtime.refresh();
    const now = downtime.current();
    if (!now) return redirectWith(c, ctx, DOWNTIME_PAGE, 'The EMR is not in planned downtime: nothing to end.');
    const what = html`<p>End this downtime now? ${downtimeLine(now)}.</p>
<p>EMR work resumes as soon as the EMR answers. Later EMR_DOWNTIME windows still count.</p>`;
    confirmPage(ctx, 'Confirm the end of the EMR downtime', what, `${DOWNTIME_PAGE}/end`, html``, 'End the downtime');
  });
  router.post(
    '/emr-downtime/start',
    consoleAction(c, {
      action: 'emr_downtime.start',
      needs: 'operator',
      what: 'Starting an EMR downtime',
      targets: (_ctx, form) => [form.get('until') ? `until:${form.get('until')}` : ''].filter(Boolean),
      async run(ctx, form) {
        const { until, reason } = startOf(c, form.get('until'), form.get('reason'));
        const d = await downtime.start(until, reason);
        await redirectWith(c, ctx, DOWNTIME_PAGE, `EMR downtime started: until ${new Date(d.until).toISOString()}.`);
        return 'ok';
      },
    }),
  );
  router.post(
    '/emr-downtime/end',
    consoleAction(c, {
      action: 'emr_downtime.end',
      needs: 'operator',
      what: 'Ending an EMR downtime',
      targets: () => [],
      async run(ctx) {
        const { ended } = await downtime.end();
        await redirectWith(
          c,
          ctx,
          DOWNTIME_PAGE,
          ended ? 'EMR downtime ended: EMR work resumes once the EMR answers.' : 'The EMR was not in planned downtime.',
        );
        return 'ok';
      },
    }),
  );
}
