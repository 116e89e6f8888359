// One event: its X-Service-* headers, every state it went through, what it did in the EMR (the records it
// wrote or claimed) and its last error. The body is hidden; an operator shows it with a POST (the "Show
// body" button), which is audited `event.body.reveal` before the page with the body is sent.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { canDo } from '../../actor.ts';
import { csrfField } from '../csrf.ts';
import type { EventDetail } from '../data.ts';
import type { ConsoleContext } from '../deps.ts';
import { notFound } from '../errors.ts';
import { badge, when } from '../format.ts';
import { consoleAction, sessionOf, takeFlash } from '../guard.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

const eventHref = (id: string) => `/console/events/${encodeURIComponent(id)}`;

function summary(e: EventDetail) {
  return html`<dl class="facts">
<div><dt>Type</dt><dd>${e.eventType}</dd></div>
<div><dt>Entity</dt><dd>${e.entityKey ?? '—'}</dd></div>
<div><dt>State</dt><dd id="event-state">${badge(e.state)}</dd></div>
<div><dt>Attempts</dt><dd>${e.attempts}</dd></div>
<div><dt>Received</dt><dd>${when(e.receivedAt)}</dd></div>
<div><dt>Finished</dt><dd>${when(e.finishedAt)}</dd></div>
${e.lastError ? html`<div><dt>Last error</dt><dd class="error-text">${e.lastError}</dd></div>` : ''}
${e.traceId ? html`<div><dt>Trace</dt><dd><code id="event-trace">${e.traceId}</code></dd></div>` : ''}
</dl>`;
}

function bodySection(ctx: Context, e: EventDetail, body: string | null | undefined) {
  const session = sessionOf(ctx);
  if (body !== undefined) {
    if (body === null) return html`<p>The body has been pruned by retention (<code>RETENTION_BODY_DAYS</code>).</p>`;
    let pretty = body;
    try {
      pretty = JSON.stringify(JSON.parse(body), null, 2);
    } catch {}
    return html`<p class="notice">Shown to you as <strong>${session.actor.name}</strong>; this was recorded in the audit trail.</p><pre id="event-body" tabindex="0">${pretty}</pre>`;
  }
  if (!e.bodyStored) return html`<p>The body has been pruned by retention (<code>RETENTION_BODY_DAYS</code>).</p>`;
  const viewer = !canDo(session.actor, 'operator');
  return html`<p>The body may hold patient data: it is hidden. Showing it is recorded in the audit trail${viewer ? ' and needs the operator role' : ''}.</p>
<form method="post" action="${eventHref(e.eventId)}/body">${csrfField(session.csrf)}<button type="submit" id="show-body">Show body</button></form>`;
}

function renderEvent(ctx: Context, e: EventDetail, flash: string | undefined, body?: string | null): string {
  const headers = Object.entries(e.headers).map(([k, v]) => html`<tr><th scope="row"><code>${k}</code></th><td><code>${v}</code></td></tr>`);
  const history = e.history.map(
    (h) => html`<tr><td>${when(h.at)}</td><td>${badge(h.state)}</td><td class="num">${h.attempt}</td><td>${h.reason ?? ''}</td></tr>`,
  );
  const refs = e.emrRefs.length ? html`<ul id="emr-refs">${e.emrRefs.map((r) => html`<li><code>${r}</code></li>`)}</ul>` : html`<p class="muted">None yet.</p>`;
  return renderPage({
    title: `Event ${e.eventId}`,
    session: sessionOf(ctx),
    current: 'events',
    ...(flash ? { flash } : {}),
    body: html`<div class="grid">
<section class="card" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>${summary(e)}
${e.state === 'dead' ? html`<p><a class="button" href="/console/dead-letters/confirm?eventId=${encodeURIComponent(e.eventId)}">Replay…</a></p>` : ''}</section>
<section class="card" aria-labelledby="emr-h"><h2 id="emr-h">In the EMR</h2>${refs}</section>
</div>
<section class="card" aria-labelledby="history-h"><h2 id="history-h">State history</h2>
<div class="scroll"><table id="history"><thead><tr><th scope="col">At</th><th scope="col">State</th><th scope="col" class="num">Attempt</th><th scope="col">Reason</th></tr></thead><tbody>${history}</tbody></table></div></section>
<section class="card" aria-labelledby="headers-h"><h2 id="headers-h">Headers</h2><div class="scroll"><table><tbody>${headers}</tbody></table></div></section>
<section class="card" aria-labelledby="body-h"><h2 id="body-h">Body</h2>${bodySection(ctx, e, body)}</section>`,
  });
}

export function registerEvent(router: Router, c: ConsoleContext): void {
  router.get('/events/:eventId', async (ctx) => {
    const e = await c.data.event(ctx.params.eventId!);
    if (!e) throw notFound('event');
    ctx.type = 'html';
    ctx.body = renderEvent(ctx, e, await takeFlash(c, ctx));
  });
  router.post(
    '/events/:eventId/body',
    consoleAction(c, {
      action: 'event.body.reveal',
      needs: 'operator',
      what: "Showing an event's body",
      targets: (ctx) => [ctx.params.eventId!],
      async run(ctx) {
        const e = await c.data.event(ctx.params.eventId!);
        if (!e) throw notFound('event');
        const body = await c.data.eventBody(e.eventId);
        ctx.type = 'html';
        ctx.body = renderEvent(ctx, e, undefined, body);
        return body === null ? 'not_found' : 'ok';
      },
    }),
  );
}
