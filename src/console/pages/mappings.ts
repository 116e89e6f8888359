// Mappings: look up a serviceId or an EMR id (`Patient/123` or the bare id) and see the other side, and
// whether the service has been told.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ConsoleContext } from '../deps.ts';
import { badge } from '../format.ts';
import { param } from '../form.ts';
import { sessionOf } from '../guard.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

async function mappingsPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const serviceId = param(ctx, 'serviceId');
  const emrId = param(ctx, 'emrId');
  const asked = serviceId !== undefined || emrId !== undefined;
  const found = asked ? await c.data.mappings({ ...(serviceId ? { serviceId } : {}), ...(emrId ? { emrId } : {}) }) : [];
  const rows = found.map(
    (m) =>
      html`<tr><td>${m.entityType}</td><td><code>${m.serviceId}</code></td><td><code>${m.emrId}</code></td><td>${badge(m.posted ? 'sent' : 'pending')}</td></tr>`,
  );
  ctx.type = 'html';
  ctx.body = renderPage({
    title: 'Mappings',
    session: sessionOf(ctx),
    current: 'mappings',
    body: html`<div class="grid">
<form class="card search" method="get" action="/console/mappings" role="search" aria-label="By serviceId">
<div class="field"><label for="f-serviceId">The service's id</label><input id="f-serviceId" name="serviceId" type="search" value="${serviceId ?? ''}"></div>
<div class="actions"><button type="submit">Look up</button></div></form>
<form class="card search" method="get" action="/console/mappings" role="search" aria-label="By EMR id">
<div class="field"><label for="f-emrId">The EMR's id (<code>Patient/123</code> or <code>123</code>)</label><input id="f-emrId" name="emrId" type="search" value="${emrId ?? ''}"></div>
<div class="actions"><button type="submit">Look up</button></div></form>
</div>
${
  asked
    ? html`<section class="card" aria-labelledby="found-h"><h2 id="found-h">Found</h2>${
        rows.length
          ? html`<div class="scroll"><table id="mappings"><thead><tr><th scope="col">Entity</th><th scope="col">serviceId</th><th scope="col">EMR id</th><th scope="col">Told the service</th></tr></thead><tbody>${rows}</tbody></table></div>`
          : html`<p id="no-mappings">No mapping for that id.</p>`
      }</section>`
    : ''
}`,
  });
}

export function registerMappings(router: Router, c: ConsoleContext): void {
  router.get('/mappings', (ctx) => mappingsPage(c, ctx));
}
