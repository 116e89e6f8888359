// The audit trail, newest first: who (the credential's name) did what, through which door, on which ids,
// from where and with what outcome; filtered by actor, action or target id, a page at a time (older ones).
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuditQuery } from '../../storage/audit.ts';
import type { ConsoleContext } from '../deps.ts';
import { badge, when } from '../format.ts';
import { param } from '../form.ts';
import { sessionOf } from '../guard.ts';
import { html, query } from '../html.ts';
import { renderPage } from '../layout.ts';

const PAGE_SIZE = 100;

async function auditPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const actor = param(ctx, 'actor');
  const action = param(ctx, 'action');
  const target = param(ctx, 'target');
  const beforeText = param(ctx, 'before');
  const before = beforeText && /^\d{1,15}$/.test(beforeText) ? Number(beforeText) : undefined;
  const q: AuditQuery = {
    limit: PAGE_SIZE,
    ...(actor ? { actor } : {}),
    ...(action ? { action } : {}),
    ...(target ? { target } : {}),
    ...(before ? { before } : {}),
  };
  const page = await c.auditor.page(q);
  const rows = page.entries.map(
    (e) => html`<tr><td>${when(e.at)}</td><td>${e.actor}</td><td>${e.door}</td><td><code>${e.action}</code></td>
<td>${e.targets.map((t, i) => html`${i ? ', ' : ''}<code>${t}</code>`)}</td><td>${e.from}</td><td>${badge(e.outcome)}</td></tr>`,
  );
  const field = (name: string, label: string, value: string | undefined) =>
    html`<div class="field"><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="search" value="${value ?? ''}"></div>`;
  ctx.type = 'html';
  ctx.body = renderPage({
    title: 'Audit trail',
    session: sessionOf(ctx),
    current: 'audit',
    body: html`<form class="card search" method="get" action="/console/audit" role="search" aria-label="Filter the audit trail">
${field('actor', 'Actor (credential name)', actor)}${field('action', 'Action', action)}${field('target', 'Target id', target)}
<div class="actions"><button type="submit">Filter</button> <a href="/console/audit">Clear</a></div></form>
<section class="card" aria-labelledby="audit-h"><h2 id="audit-h">Entries, newest first</h2>
${
  rows.length
    ? html`<div class="scroll"><table id="audit"><thead><tr><th scope="col">At</th><th scope="col">Actor</th><th scope="col">Door</th><th scope="col">Action</th><th scope="col">Targets</th><th scope="col">From</th><th scope="col">Outcome</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p id="no-audit">No entries.</p>`
}
<nav class="pager" aria-label="Pages">${page.next ? html`<a rel="next" href="/console/audit${query({ actor, action, target, before: page.next })}">Older entries</a>` : ''}</nav>
</section>`,
  });
}

export function registerAudit(router: Router, c: ConsoleContext): void {
  router.get('/audit', (ctx) => auditPage(c, ctx));
}
