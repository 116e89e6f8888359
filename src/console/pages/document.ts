// One document: from the EMR to its final status (its history), and a retry where the data port allows it,
// through a confirmation page and a POST with the CSRF token, audited `document.retry`.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ConsoleContext } from '../deps.ts';
import { csrfField } from '../csrf.ts';
import type { DocumentDetail } from '../data.ts';
import { ConsolePageError, notFound } from '../errors.ts';
import { badge, when } from '../format.ts';
import { consoleAction, mustBeAllowed, redirectWith, sessionOf, sendPage } from '../guard.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

const docHref = (id: string) => `/console/documents/${encodeURIComponent(id)}`;

async function load(c: ConsoleContext, ctx: Context): Promise<DocumentDetail> {
  const d = await c.data.document(ctx.params.externalId!);
  if (!d) throw notFound('document');
  return d;
}

async function documentPage(c: ConsoleContext, ctx: Context, d: DocumentDetail): Promise<void> {
  const history = d.history.map((h) => html`<tr><td>${when(h.at)}</td><td>${badge(h.status)}</td><td>${h.detail ?? ''}</td></tr>`);
  await sendPage(c, ctx, {
    title: `Document ${d.externalId}`,
    current: 'documents',
    body: html`<section class="card" aria-labelledby="doc-h"><h2 id="doc-h">Now</h2><dl class="facts">
<div><dt>Type</dt><dd>${d.documentType}</dd></div>
<div><dt>Status</dt><dd id="document-status">${badge(d.status)}</dd></div>
<div><dt>Error</dt><dd>${d.errorCode ?? '—'}</dd></div>
<div><dt>Patient (serviceId)</dt><dd>${d.serviceId ?? '—'}</dd></div>
<div><dt>File</dt><dd id="document-file">${d.file ? html`${d.file.size} bytes, SHA-256 <code>${d.file.sha256}</code>` : '—'}</dd></div>
<div><dt>Entered the outbox</dt><dd>${when(d.createdAt)}</dd></div>
<div><dt>Changed</dt><dd>${when(d.updatedAt)}</dd></div>
</dl>
${d.retryable ? html`<p><a class="button" id="retry" href="${docHref(d.externalId)}/confirm-retry">Retry…</a></p>` : html`<p class="muted">No retry is possible in this status.</p>`}
</section>
<section class="card" aria-labelledby="history-h"><h2 id="history-h">History</h2>
<div class="scroll"><table id="document-history"><thead><tr><th scope="col">At</th><th scope="col">Status</th><th scope="col">Detail</th></tr></thead><tbody>${history}</tbody></table></div></section>`,
  });
}

export function registerDocument(router: Router, c: ConsoleContext): void {
  router.get('/documents/:externalId', async (ctx) => documentPage(c, ctx, await load(c, ctx)));
  router.get('/documents/:externalId/confirm-retry', async (ctx) => {
    const d = await load(c, ctx);
    await mustBeAllowed(c, ctx, 'document.retry', 'operator', [d.externalId], 'Retrying a document');
    if (!d.retryable)
      throw new ConsolePageError(409, 'No retry possible', html`Document <code>${d.externalId}</code> is ${d.status}; it cannot be retried now.`);
    ctx.type = 'html';
    ctx.body = renderPage({
      title: 'Confirm the retry',
      session: sessionOf(ctx),
      current: 'documents',
      body: html`<form class="card narrow confirm" method="post" action="${docHref(d.externalId)}/retry">
<p>Send document <code>${d.externalId}</code> (${d.documentType}, now ${d.status}) to the service again?</p>${csrfField(sessionOf(ctx).csrf)}
<div class="actions"><button type="submit" id="confirm">Retry the document</button> <a href="${docHref(d.externalId)}">Cancel</a></div></form>`,
    });
  });
  router.post(
    '/documents/:externalId/retry',
    consoleAction(c, {
      action: 'document.retry',
      needs: 'operator',
      what: 'Retrying a document',
      targets: (ctx) => [ctx.params.externalId!],
      async run(ctx) {
        const id = ctx.params.externalId!;
        const r = await c.actions.retryDocument(id);
        await redirectWith(
          c,
          ctx,
          docHref(id),
          r.ok ? 'The document is queued to be sent again.' : `The document was not retried: ${r.reason ?? 'not allowed now'}.`,
        );
        return r.ok ? 'ok' : 'failed';
      },
    }),
  );
}
