// Events: search by eventId, event type, the entity's serviceId, state and time received; a table of what
// matched, newest first as the data port gives it, a page at a time (the next page keeps the filters).
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { EventQuery, EventSummary } from '../data.ts';
import type { ConsoleContext } from '../deps.ts';
import { badge, parseTimeInput, timeInputValue, when } from '../format.ts';
import { param } from '../form.ts';
import { sendPage } from '../guard.ts';
import { html, query } from '../html.ts';

export const EVENT_STATES = ['pending', 'retrying', 'waiting', 'applied', 'discarded_stale', 'dead', 'dismissed'] as const;
const PAGE_SIZE = 50;

interface Filters {
  eventId?: string | undefined;
  type?: string | undefined;
  serviceId?: string | undefined;
  state?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

const input = (name: keyof Filters, label: string, value: string | undefined, type = 'search') =>
  html`<div class="field"><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="${type}" value="${value ?? ''}"></div>`;

function searchForm(f: Filters, since: number | undefined, until: number | undefined) {
  const options = EVENT_STATES.map((s) => html`<option value="${s}"${s === f.state ? html` selected` : ''}>${s}</option>`);
  return html`<form class="card search" method="get" action="/console/events" role="search" aria-label="Search events">
${input('eventId', 'Event id', f.eventId)}
${input('type', 'Event type', f.type)}
${input('serviceId', 'Entity serviceId', f.serviceId)}
<div class="field"><label for="f-state">State</label><select id="f-state" name="state"><option value="">any</option>${options}</select></div>
${input('since', 'Received from (UTC)', timeInputValue(since), 'datetime-local')}
${input('until', 'Received before (UTC)', timeInputValue(until), 'datetime-local')}
<div class="actions"><button type="submit">Search</button> <a href="/console/events">Clear</a></div>
</form>`;
}

export function eventRows(rows: EventSummary[]) {
  return rows.map(
    (e) => html`<tr>
<td><a href="/console/events/${encodeURIComponent(e.eventId)}"><code>${e.eventId}</code></a></td>
<td>${e.eventType}<br><span class="muted">${e.entityKey ?? ''}</span></td><td>${badge(e.state)}</td><td class="num">${e.attempts}</td>
<td>${when(e.receivedAt)}</td><td>${when(e.finishedAt)}</td></tr>`,
  );
}

export const EVENT_HEAD = html`<tr><th scope="col">Event id</th><th scope="col">Type, entity</th><th scope="col">State</th><th scope="col" class="num">Attempts</th><th scope="col">Received</th><th scope="col">Finished</th></tr>`;

async function eventsPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const f: Filters = {
    eventId: param(ctx, 'eventId'),
    type: param(ctx, 'type'),
    serviceId: param(ctx, 'serviceId'),
    state: param(ctx, 'state'),
    since: param(ctx, 'since'),
    until: param(ctx, 'until'),
  };
  const since = parseTimeInput(f.since);
  const until = parseTimeInput(f.until);
  const after = param(ctx, 'after');
  const q: EventQuery = {
    limit: PAGE_SIZE,
    ...(f.eventId ? { eventId: f.eventId } : {}),
    ...(f.type ? { eventType: f.type } : {}),
    ...(f.serviceId ? { serviceId: f.serviceId } : {}),
    ...(f.state ? { state: f.state } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(after ? { after } : {}),
  };
  const page = await c.data.events(q);
  const keep = { ...f, since: since === undefined ? undefined : timeInputValue(since), until: until === undefined ? undefined : timeInputValue(until) };
  const ignored = (f.since && since === undefined) || (f.until && until === undefined);
  await sendPage(c, ctx, {
    title: 'Events',
    current: 'events',
    body: html`${searchForm(f, since, until)}
${ignored ? html`<p class="error" role="alert">A time could not be read and was ignored; use the picker or 2026-01-15T10:00.</p>` : ''}
<section class="card" aria-labelledby="results-h"><h2 id="results-h">Results</h2>
${
  page.rows.length === 0
    ? html`<p id="no-results">No event matches.</p>`
    : html`<div class="scroll"><table id="events-table"><thead>${EVENT_HEAD}</thead><tbody>${eventRows(page.rows)}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${after ? html`<a href="/console/events${query(keep)}">First page</a>` : ''}${
      page.next ? html`<a href="/console/events${query({ ...keep, after: page.next })}" rel="next">Next page</a>` : ''
    }</nav>
</section>`,
  });
}

export function registerEvents(router: Router, c: ConsoleContext): void {
  router.get('/events', (ctx) => eventsPage(c, ctx));
}
