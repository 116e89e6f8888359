// Documents: the outbox by status (HELD, FAILED, REJECTED, SENT…), newest first, a page at a time; each
// links to its history (./document.ts).
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ConsoleContext } from '../deps.ts';
import { badge, when } from '../format.ts';
import { param } from '../form.ts';
import { sendPage } from '../guard.ts';
import { html, query } from '../html.ts';

export const DOCUMENT_STATUSES = ['queued', 'HELD', 'FAILED', 'REJECTED', 'SENT', 'SUPPRESSED'] as const;
const PAGE_SIZE = 50;

async function documentsPage(c: ConsoleContext, ctx: Context): Promise<void> {
  const status = param(ctx, 'status');
  const after = param(ctx, 'after');
  const page = await c.data.documents({ limit: PAGE_SIZE, ...(status ? { status } : {}), ...(after ? { after } : {}) });
  const tabs = [undefined, ...DOCUMENT_STATUSES].map(
    (s) => html`<li><a href="/console/documents${query({ status: s })}"${s === status ? html` aria-current="true"` : ''}>${s ?? 'all'}</a></li>`,
  );
  const rows = page.rows.map(
    (d) => html`<tr><td><a href="/console/documents/${encodeURIComponent(d.externalId)}"><code>${d.externalId}</code></a></td><td>${d.documentType}</td>
<td>${badge(d.status)}</td><td>${d.errorCode ?? ''}</td><td>${when(d.createdAt)}</td><td>${when(d.updatedAt)}</td></tr>`,
  );
  await sendPage(c, ctx, {
    title: 'Documents',
    current: 'documents',
    body: html`<nav aria-label="By status"><ul class="tabs">${tabs}</ul></nav>
<section class="card" aria-labelledby="docs-h"><h2 id="docs-h">${status ? html`Status ${status}` : 'Every status'}</h2>
${
  page.rows.length === 0
    ? html`<p id="no-documents">No documents${status ? html` with status ${status}` : ''}.</p>`
    : html`<div class="scroll"><table id="documents"><thead><tr><th scope="col">External id</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Error</th><th scope="col">Entered the outbox</th><th scope="col">Changed</th></tr></thead><tbody>${rows}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${page.next ? html`<a rel="next" href="/console/documents${query({ status, after: page.next })}">Next page</a>` : ''}</nav>
</section>`,
  });
}

export function registerDocuments(router: Router, c: ConsoleContext): void {
  router.get('/documents', (ctx) => documentsPage(c, ctx));
}
