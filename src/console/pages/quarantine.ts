// The quarantine: signed webhooks over WEBHOOK_MAX_BODY_BYTES kept instead of refused (src/receiver/quarantine.ts),
// with how full it is and the limit now. Apply one (into the inbox, once; only when its size fits the limit now,
// so after WEBHOOK_MAX_BODY_BYTES was raised and the adapter restarted) or dismiss one with a reason, each through
// a confirmation page (a GET that changes nothing; a viewer is refused there, audited `denied`) and then a POST
// with the CSRF token, audited `quarantine.apply` or `quarantine.dismiss` (the eventId, never the reason). The same
// operations as POST /admin/quarantine/{eventId}/apply and /dismiss.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { NotFoundError } from '../../errors.ts';
import { QuarantineRefusal, type QuarantinedEvent, type QuarantineState } from '../../receiver/quarantine.ts';
import { csrfField } from '../csrf.ts';
import type { ConsoleContext } from '../deps.ts';
import { ConsolePageError, notFound } from '../errors.ts';
import { param } from '../form.ts';
import { badge, when } from '../format.ts';
import { consoleAction, mustBeAllowed, redirectWith, sendPage, sessionOf } from '../guard.ts';
import { type Html, html, query } from '../html.ts';
import { renderPage } from '../layout.ts';

export const QUARANTINE_PAGE = '/console/quarantine';
const PAGE_SIZE = 100;
const STATES: readonly QuarantineState[] = ['quarantined', 'applied', 'dismissed'];
const reasonText = z.string().trim().min(1).max(500);

/** Bytes as a person reads them: 2.1 MiB, 256 KiB, 900 B. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}

function stateOf(value: string | undefined): QuarantineState {
  if (value === undefined) return 'quarantined';
  if ((STATES as readonly string[]).includes(value)) return value as QuarantineState;
  throw new ConsolePageError(400, 'No such state', `A quarantined webhook is ${STATES.join(', ')}.`);
}

function positionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new ConsolePageError(400, 'Bad page', 'That page position was not given out by this list.');
  return Number(value);
}

function eventIdOf(value: string | null | undefined): string {
  const id = value?.trim() ?? '';
  if (!id || id.length > 200) throw new ConsolePageError(400, 'No event', 'Name the quarantined event (its eventId).');
  return id;
}

function afterWhat(e: QuarantinedEvent): Html {
  if (e.applied) return html`applied by ${e.applied.by}, ${when(e.applied.at)}`;
  if (e.dismissal) return html`dismissed by ${e.dismissal.by}, ${when(Date.parse(e.dismissal.at))}: <span class="reason">${e.dismissal.reason}</span>`;
  return html``;
}

async function listPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const quarantine = c.quarantine!;
  const state = stateOf(param(ctx, 'state'));
  const after = positionOf(param(ctx, 'after'));
  const [page, usage] = await Promise.all([quarantine.page({ state, limit: PAGE_SIZE, ...(after !== undefined ? { after } : {}) }), quarantine.usage()]);
  const limit = quarantine.maxBodyBytes;
  const rows = page.events.map((e) => {
    const fits = e.size <= limit;
    const actions =
      e.state === 'quarantined'
        ? html`${fits ? html`<a href="${QUARANTINE_PAGE}/confirm-apply${query({ eventId: e.eventId })}" aria-label="Apply ${e.eventId}">Apply…</a> ` : ''}<a href="${QUARANTINE_PAGE}/confirm-dismiss${query({ eventId: e.eventId })}" aria-label="Dismiss ${e.eventId}">Dismiss…</a>`
        : afterWhat(e);
    return html`<tr><td><code>${e.eventId}</code></td><td>${e.eventType}</td><td class="num">${bytes(e.size)}${fits ? '' : html`<br><span class="muted">over the limit</span>`}</td>
<td>${when(e.receivedAt)}</td><td>${badge(e.state)}</td><td>${actions}</td></tr>`;
  });
  const tabs = STATES.map(
    (s) =>
      html`<li><a href="${QUARANTINE_PAGE}${query({ state: s === 'quarantined' ? undefined : s })}"${s === state ? html` aria-current="page"` : ''}>${s}</a></li>`,
  );
  await sendPage(c, ctx, {
    title: 'Quarantine',
    current: 'quarantine',
    body: html`<section class="card" aria-labelledby="room-h"><h2 id="room-h">Signed webhooks over the size limit</h2>
<p>Each was correctly signed but larger than <code>WEBHOOK_MAX_BODY_BYTES</code> (now <strong id="limit">${bytes(limit)}</strong>), so it was kept here
and the service was told it arrived. Raise the limit to at least an event's size and restart the adapter, then apply it; or dismiss it.</p>
<dl class="numbers"><div><dt>Waiting</dt><dd id="quarantine-events">${usage.events}</dd></div>
<div><dt>Stored</dt><dd id="quarantine-bytes">${bytes(usage.bytes)} of ${bytes(quarantine.capacityBytes)}</dd></div></dl>
</section>
<section class="card" aria-labelledby="list-h"><h2 id="list-h">Events</h2>
<nav aria-label="States"><ul class="tabs">${tabs}</ul></nav>
${
  page.events.length === 0
    ? html`<p id="no-quarantined">Nothing ${state} here.</p>`
    : html`<div class="scroll"><table id="quarantine"><thead><tr><th scope="col">Event id</th><th scope="col">Type</th><th scope="col" class="num">Size</th><th scope="col">Received</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${page.next !== null ? html`<a rel="next" href="${QUARANTINE_PAGE}${query({ state: state === 'quarantined' ? undefined : state, after: page.next })}">Next page</a>` : ''}</nav>
</section>`,
  });
}

function confirmPage(ctx: Context, title: string, what: Html, action: string, fields: Html, label: string): void {
  ctx.type = 'html';
  ctx.body = renderPage({
    title,
    session: sessionOf(ctx),
    current: 'quarantine',
    body: html`<form class="card narrow confirm" method="post" action="${action}">${what}${fields}${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">${label}</button> <a href="${QUARANTINE_PAGE}">Cancel</a></div></form>`,
  });
}

/** The quarantined event a confirmation is about: a 404 page when unknown; back to the list when done already. */
async function waiting(c: ConsoleContext, ctx: Context, eventId: string): Promise<QuarantinedEvent | undefined> {
  const e = await c.quarantine!.get(eventId);
  if (!e) throw notFound('quarantined event');
  if (e.state !== 'quarantined') {
    await redirectWith(c, ctx, QUARANTINE_PAGE, `${eventId} was ${e.state} already.`);
    return undefined;
  }
  return e;
}

/** The outcome of an apply or a dismissal refused by the rules (done already, over the limit): back to the list, saying why. */
async function refused(c: ConsoleContext, ctx: Context, err: unknown): Promise<'refused'> {
  if (err instanceof NotFoundError) throw notFound('quarantined event');
  if (!(err instanceof QuarantineRefusal)) throw err;
  await redirectWith(c, ctx, QUARANTINE_PAGE, `Not done: ${err.message}.`);
  return 'refused';
}

export function registerQuarantine(router: Router, c: ConsoleContext): void {
  if (!c.quarantine) return;
  const quarantine = c.quarantine;
  router.get('/quarantine', (ctx) => listPage(c, ctx));
  router.get('/quarantine/confirm-apply', async (ctx) => {
    const eventId = eventIdOf(param(ctx, 'eventId'));
    await mustBeAllowed(c, ctx, 'quarantine.apply', 'operator', [eventId], 'Applying a quarantined webhook');
    const e = await waiting(c, ctx, eventId);
    if (!e) return;
    if (e.size > quarantine.maxBodyBytes)
      throw new ConsolePageError(
        422,
        'Raise the limit first',
        html`This event is ${e.size} bytes, over <code>WEBHOOK_MAX_BODY_BYTES</code> (${quarantine.maxBodyBytes}). Raise <code>WEBHOOK_MAX_BODY_BYTES</code> to at least ${e.size} and restart the adapter, then apply it.`,
      );
    const what = html`<p>Apply <code>${e.eventId}</code> (${e.eventType}, ${bytes(e.size)}, received ${when(e.receivedAt)})?</p>
<p>It goes into the inbox as if received now and is processed once, like any other event; its body leaves the quarantine.</p>`;
    confirmPage(ctx, 'Confirm the apply', what, `${QUARANTINE_PAGE}/apply`, html`<input type="hidden" name="eventId" value="${e.eventId}">`, 'Apply 1 event');
  });
  router.get('/quarantine/confirm-dismiss', async (ctx) => {
    const eventId = eventIdOf(param(ctx, 'eventId'));
    await mustBeAllowed(c, ctx, 'quarantine.dismiss', 'operator', [eventId], 'Dismissing a quarantined webhook');
    const e = await waiting(c, ctx, eventId);
    if (!e) return;
    const what = html`<p>Dismiss <code>${e.eventId}</code> (${e.eventType}, ${bytes(e.size)}, received ${when(e.receivedAt)})? It will never be applied; its body is dropped.</p>`;
    const fields = html`<input type="hidden" name="eventId" value="${e.eventId}">
<div class="field"><label for="reason">Reason</label><input id="reason" name="reason" required maxlength="500" placeholder="sent again smaller by the clinic"></div>`;
    confirmPage(ctx, 'Confirm the dismissal', what, `${QUARANTINE_PAGE}/dismiss`, fields, 'Dismiss 1 event');
  });
  router.post(
    '/quarantine/apply',
    consoleAction(c, {
      action: 'quarantine.apply',
      needs: 'operator',
      what: 'Applying a quarantined webhook',
      targets: (_ctx, form) => [form.get('eventId') ?? ''].filter(Boolean),
      async run(ctx, form, session) {
        const eventId = eventIdOf(form.get('eventId'));
        try {
          const r = await quarantine.apply(eventId, session.actor.name);
          const note = r.inbox === 'duplicate' ? ' (the inbox held it already: not stored again)' : '';
          await redirectWith(c, ctx, QUARANTINE_PAGE, `Applied ${eventId}: it is in the inbox${note}.`);
          return 'ok';
        } catch (err) {
          return refused(c, ctx, err);
        }
      },
    }),
  );
  router.post(
    '/quarantine/dismiss',
    consoleAction(c, {
      action: 'quarantine.dismiss',
      needs: 'operator',
      what: 'Dismissing a quarantined webhook',
      targets: (_ctx, form) => [form.get('eventId') ?? ''].filter(Boolean),
      async run(ctx, form, session) {
        const eventId = eventIdOf(form.get('eventId'));
        const reason = reasonText.safeParse(form.get('reason') ?? '');
        if (!reason.success) throw new ConsolePageError(400, 'No reason', 'Say why it is dismissed (500 characters at most).');
        try {
          await quarantine.dismiss(eventId, reason.data, session.actor.name);
          await redirectWith(c, ctx, QUARANTINE_PAGE, `Dismissed ${eventId}.`);
          return 'ok';
        } catch (err) {
          return refused(c, ctx, err);
        }
      },
    }),
  );
}
