// Dead letters: why each was parked; replay one, a selection (checkboxes) or every one of an event type. The
// mappings the service refused are listed below the events, with their own replay and dismissal (./dead-mappings.ts).
// Each replay goes through a confirmation page (a GET that changes nothing; a viewer is refused there) and
// then a POST with the CSRF token, audited `dead_letter.replay` (the eventIds) or `dead_letter.replay_all`
// (the event type), and comes back here with what happened.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ConsoleContext } from '../deps.ts';
import { csrfField } from '../csrf.ts';
import { ConsolePageError } from '../errors.ts';
import { when } from '../format.ts';
import { param, params } from '../form.ts';
import { consoleAction, mustBeAllowed, redirectWith, sessionOf, sendPage } from '../guard.ts';
import { html, query } from '../html.ts';
import { renderPage } from '../layout.ts';
import { deadMappingsSection, registerDeadMappings } from './dead-mappings.ts';

const PAGE_SIZE = 100;
/** The most eventIds one confirmation replays (a larger batch: replay all of a type). */
const MAX_SELECTED = 500;
const HOME = '/console/dead-letters';

function tooMany(): ConsolePageError {
  return new ConsolePageError(400, 'Too many selected', `Select at most ${MAX_SELECTED} dead letters at once, or replay all of a type.`);
}

function eventTypeOf(value: string | null | undefined): string {
  const t = value?.trim() ?? '';
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(t)) throw new ConsolePageError(400, 'No event type', 'Name the event type to replay, e.g. appointment.created.');
  return t;
}

async function listPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const type = param(ctx, 'type');
  const after = param(ctx, 'after');
  const [page, mappings] = await Promise.all([
    c.data.deadLetters({ limit: PAGE_SIZE, ...(type ? { eventType: type } : {}), ...(after ? { after } : {}) }),
    deadMappingsSection(c, ctx),
  ]);
  const rows = page.rows.map(
    (e) => html`<tr>
<td><input type="checkbox" name="eventId" value="${e.eventId}" id="sel-${e.eventId}" aria-label="Select ${e.eventId}"></td>
<td><a href="/console/events/${encodeURIComponent(e.eventId)}"><code>${e.eventId}</code></a></td><td>${e.eventType}<br><span class="muted">${e.entityKey ?? ''}</span></td>
<td class="reason">${e.reason ?? ''}</td><td class="num">${e.attempts}</td><td>${when(e.receivedAt)}</td>
<td><a href="${HOME}/confirm${query({ eventId: e.eventId })}" aria-label="Replay ${e.eventId}">Replay…</a></td></tr>`,
  );
  await sendPage(c, ctx, {
    title: 'Dead letters',
    current: 'dead-letters',
    body: html`<div class="grid">
<form class="card search" method="get" action="${HOME}" role="search" aria-label="Filter dead letters">
<div class="field"><label for="f-type">Event type</label><input id="f-type" name="type" type="search" value="${type ?? ''}"></div>
<div class="actions"><button type="submit">Filter</button> <a href="${HOME}">Clear</a></div></form>
<form class="card" method="get" action="${HOME}/confirm-type">
<div class="field"><label for="replay-type">Replay every dead letter of the type</label><input id="replay-type" name="eventType" required value="${type ?? ''}" placeholder="appointment.created"></div>
<div class="actions"><button type="submit">Replay all of this type…</button></div></form>
</div>
<section class="card" aria-labelledby="list-h"><h2 id="list-h">Parked events</h2>
${
  page.rows.length === 0
    ? html`<p id="no-dead-letters">No dead letters${type ? html` of type <code>${type}</code>` : ''}.</p>`
    : html`<form method="get" action="${HOME}/confirm">
<div class="scroll"><table id="dead-letters"><thead><tr><th scope="col"><input type="checkbox" id="select-all" aria-label="Select all on this page" hidden></th><th scope="col">Event id</th><th scope="col">Type, entity</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col">Received</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>
<div class="actions"><button type="submit" id="replay-selected">Replay selected…</button></div></form>`
}
<nav class="pager" aria-label="Pages">${page.next ? html`<a rel="next" href="${HOME}${query({ type, after: page.next })}">Next page</a>` : ''}</nav>
</section>
${mappings}`,
  });
}

function confirmPage(ctx: Context, title: string, what: ReturnType<typeof html>, action: string, hidden: ReturnType<typeof html>, label: string): void {
  ctx.type = 'html';
  ctx.body = renderPage({
    title,
    session: sessionOf(ctx),
    current: 'dead-letters',
    body: html`<form class="card narrow confirm" method="post" action="${action}">${what}${hidden}${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">${label}</button> <a href="${HOME}">Cancel</a></div></form>`,
  });
}

export function registerDeadLetters(router: Router, c: ConsoleContext): void {
  router.get('/dead-letters', (ctx) => listPage(c, ctx));
  registerDeadMappings(router, c);
  router.get('/dead-letters/confirm', async (ctx) => {
    const ids = params(ctx, 'eventId');
    if (ids.length === 0) return redirectWith(c, ctx, HOME, 'Select at least one dead letter to replay.');
    if (ids.length > MAX_SELECTED) throw tooMany();
    await mustBeAllowed(c, ctx, 'dead_letter.replay', 'operator', ids, 'Replaying a dead letter');
    const list = html`<p>Replay ${ids.length === 1 ? 'this dead letter' : html`these ${ids.length} dead letters`}? Each goes back to the inbox and is processed again.</p><ul class="ids">${ids.map((id) => html`<li><code>${id}</code></li>`)}</ul>`;
    const hidden = html`${ids.map((id) => html`<input type="hidden" name="eventId" value="${id}">`)}`;
    confirmPage(ctx, 'Confirm the replay', list, `${HOME}/replay`, hidden, ids.length === 1 ? 'Replay 1 event' : `Replay ${ids.length} events`);
  });
  router.get('/dead-letters/confirm-type', async (ctx) => {
    const eventType = eventTypeOf(param(ctx, 'eventType'));
    await mustBeAllowed(c, ctx, 'dead_letter.replay_all', 'operator', [eventType], 'Replaying dead letters');
    const listed = await c.data.deadLetters({ eventType, limit: MAX_SELECTED });
    const count = listed.next ? `more than ${listed.rows.length}` : String(listed.rows.length);
    const what = html`<p>Replay every dead letter of type <code>${eventType}</code> (${count} now)? Each goes back to the inbox and is processed again.</p>`;
    confirmPage(
      ctx,
      'Confirm the replay of a type',
      what,
      `${HOME}/replay-type`,
      html`<input type="hidden" name="eventType" value="${eventType}">`,
      `Replay all ${eventType}`,
    );
  });
  router.post(
    '/dead-letters/replay',
    consoleAction(c, {
      action: 'dead_letter.replay',
      needs: 'operator',
      what: 'Replaying a dead letter',
      targets: (_ctx, form) => form.getAll('eventId').filter(Boolean),
      async run(ctx, form) {
        const ids = form.getAll('eventId').filter(Boolean);
        if (ids.length === 0 || ids.length > MAX_SELECTED) throw tooMany();
        const r = await c.actions.replay(ids);
        const notDead = r.notDead.length ? ` ${r.notDead.length} no longer a dead letter: ${r.notDead.join(', ')}.` : '';
        await redirectWith(c, ctx, HOME, `Replayed ${r.replayed.length} of ${ids.length}.${notDead}`);
        return r.replayed.length > 0 ? 'ok' : 'failed';
      },
    }),
  );
  router.post(
    '/dead-letters/replay-type',
    consoleAction(c, {
      action: 'dead_letter.replay_all',
      needs: 'operator',
      what: 'Replaying dead letters',
      targets: (_ctx, form) => [form.get('eventType') ?? ''].filter(Boolean),
      async run(ctx, form) {
        const eventType = eventTypeOf(form.get('eventType'));
        const r = await c.actions.replayAllOfType(eventType);
        await redirectWith(c, ctx, HOME, `Replayed ${r.events} dead letters of type ${eventType}.`);
        return 'ok';
      },
    }),
  );
}
