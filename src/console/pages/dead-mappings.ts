// Refused mappings on the dead-letters page: each mapping the service refused (404: it does not know the record;
// 409: it maps the record to another EMR id) with the service's reason, replayed (posted again with fresh
// attempts, once the service knows the record) or dismissed with a reason (kept, never posted). As for events,
// each goes through a confirmation page (a GET that changes nothing; a viewer is refused there) and then a POST
// with the CSRF token, audited `mapping.replay` or `mapping.dismiss` with the target `entityType:serviceId` (the
// admin API's names for the same operations), and comes back to the list with what happened.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { MAPPING_ENTITY_TYPES } from '../../contract/api.ts';
import type { ConsoleContext } from '../deps.ts';
import { csrfField } from '../csrf.ts';
import { ConsolePageError } from '../errors.ts';
import { param } from '../form.ts';
import { consoleAction, mustBeAllowed, redirectWith, sessionOf } from '../guard.ts';
import { html, type Html, query } from '../html.ts';
import { renderPage } from '../layout.ts';

const PAGE_SIZE = 100;
const HOME = '/console/dead-letters';
const REASON_MAX = 500;

interface MappingKey {
  entityType: string;
  serviceId: string;
}

/** The mapping a form or a link names; a 400 page when it names none. */
function mappingOf(entityType: string | null | undefined, serviceId: string | null | undefined): MappingKey {
  const t = entityType?.trim() ?? '';
  const id = serviceId?.trim() ?? '';
  if (!(MAPPING_ENTITY_TYPES as readonly string[]).includes(t) || id.length === 0 || id.length > 200)
    throw new ConsolePageError(400, 'No such mapping', `Name a refused mapping: an entity type (${MAPPING_ENTITY_TYPES.join(', ')}) and its serviceId.`);
  return { entityType: t, serviceId: id };
}

/** How the audit trail names a mapping (as the admin API's routes do). */
const target = (m: MappingKey): string => `${m.entityType}:${m.serviceId}`;
const label = (m: MappingKey): Html => html`${m.entityType} <code>${m.serviceId}</code>`;

/** The refused mappings' section of the dead-letters page, a page at a time (`mappingsAfter`). */
export async function deadMappingsSection(c: ConsoleContext, ctx: Context): Promise<Html> {
  const after = param(ctx, 'mappingsAfter');
  const page = await c.data.deadMappings({ limit: PAGE_SIZE, ...(after ? { after } : {}) });
  const rows = page.rows.map((m) => {
    const q = query({ entityType: m.entityType, serviceId: m.serviceId });
    return html`<tr>
<td>${m.entityType}</td><td><code>${m.serviceId}</code></td><td><code>${m.externalId}</code></td>
<td class="reason">${m.reason ?? ''}</td><td class="num">${m.attempts}</td>
<td><a href="${HOME}/mappings/confirm-replay${q}" aria-label="Replay the ${m.entityType} mapping ${m.serviceId}">Replay…</a>
<a href="${HOME}/mappings/confirm-dismiss${q}" aria-label="Dismiss the ${m.entityType} mapping ${m.serviceId}">Dismiss…</a></td></tr>`;
  });
  const list =
    page.rows.length === 0
      ? html`<p id="no-dead-mappings">No refused mappings.</p>`
      : html`<div class="scroll"><table id="dead-mappings"><thead><tr><th scope="col">Entity</th><th scope="col">Service id</th><th scope="col">EMR id</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const next = page.next ? html`<a rel="next" href="${HOME}${query({ mappingsAfter: page.next })}#mappings-h">Next page of mappings</a>` : '';
  return html`<section class="card" aria-labelledby="mappings-h"><h2 id="mappings-h">Refused mappings</h2>
<p class="muted">Mappings the service refused to take back: it did not know the record (404), or maps it to another EMR record (409). Replay one once the service knows the record; dismiss one that should never be sent.</p>
${list}
<nav class="pager" aria-label="Pages of mappings">${next}</nav>
</section>`;
}

function confirmPage(ctx: Context, title: string, body: Html): void {
  ctx.type = 'html';
  ctx.body = renderPage({ title, session: sessionOf(ctx), current: 'dead-letters', body });
}

const hiddenKey = (m: MappingKey): Html =>
  html`<input type="hidden" name="entityType" value="${m.entityType}"><input type="hidden" name="serviceId" value="${m.serviceId}">`;

export function registerDeadMappings(router: Router, c: ConsoleContext): void {
  router.get('/dead-letters/mappings/confirm-replay', async (ctx) => {
    const m = mappingOf(param(ctx, 'entityType'), param(ctx, 'serviceId'));
    await mustBeAllowed(c, ctx, 'mapping.replay', 'operator', [target(m)], 'Replaying a refused mapping');
    confirmPage(
      ctx,
      'Confirm the replay',
      html`<form class="card narrow confirm" method="post" action="${HOME}/mappings/replay">
<p>Post the ${label(m)} mapping to the service again, with fresh attempts? Do this once the service knows the record.</p>
${hiddenKey(m)}${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">Replay the mapping</button> <a href="${HOME}">Cancel</a></div></form>`,
    );
  });
  router.get('/dead-letters/mappings/confirm-dismiss', async (ctx) => {
    const m = mappingOf(param(ctx, 'entityType'), param(ctx, 'serviceId'));
    await mustBeAllowed(c, ctx, 'mapping.dismiss', 'operator', [target(m)], 'Dismissing a refused mapping');
    confirmPage(
      ctx,
      'Confirm the dismissal',
      html`<form class="card narrow confirm" method="post" action="${HOME}/mappings/dismiss">
<p>Dismiss the ${label(m)} mapping? It is kept with your reason and never sent; a bulk replay leaves it alone.</p>
<div class="field"><label for="reason">Reason</label><input id="reason" name="reason" required maxlength="${REASON_MAX}" placeholder="mapped by hand at the service"></div>
${hiddenKey(m)}${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">Dismiss the mapping</button> <a href="${HOME}">Cancel</a></div></form>`,
    );
  });
  const targets = (_ctx: Context, form: URLSearchParams) => {
    const t = form.get('entityType');
    const id = form.get('serviceId');
    return t && id ? [`${t}:${id}`] : [];
  };
  router.post(
    '/dead-letters/mappings/replay',
    consoleAction(c, {
      action: 'mapping.replay',
      needs: 'operator',
      what: 'Replaying a refused mapping',
      targets,
      async run(ctx, form) {
        const m = mappingOf(form.get('entityType'), form.get('serviceId'));
        const replayed = await c.actions.replayMapping(m.entityType, m.serviceId);
        const what = `The ${m.entityType} mapping ${m.serviceId}`;
        await redirectWith(c, ctx, HOME, replayed ? `${what} is queued to be posted again.` : `${what} is no longer a refused mapping.`);
        return replayed ? 'ok' : 'failed';
      },
    }),
  );
  router.post(
    '/dead-letters/mappings/dismiss',
    consoleAction(c, {
      action: 'mapping.dismiss',
      needs: 'operator',
      what: 'Dismissing a refused mapping',
      targets,
      async run(ctx, form, session) {
        const m = mappingOf(form.get('entityType'), form.get('serviceId'));
        const reason = form.get('reason')?.trim() ?? '';
        if (reason.length === 0 || reason.length > REASON_MAX)
          throw new ConsolePageError(400, 'No reason', `Say why the mapping is dismissed (at most ${REASON_MAX} characters).`);
        // The reason is kept with the mapping (shown to operators), not written to the audit trail or the logs.
        const dismissed = await c.actions.dismissMapping(m.entityType, m.serviceId, reason, session.actor.name);
        const what = `The ${m.entityType} mapping ${m.serviceId}`;
        await redirectWith(c, ctx, HOME, dismissed ? `${what} is dismissed.` : `${what} is no longer a refused mapping.`);
        return dismissed ? 'ok' : 'failed';
      },
    }),
  );
}
