// The crosswalk's bulk import from the "Needs mapping" page: a CSV file uploaded or its lines pasted (a multipart
// form with the CSRF token; operator only), imported line by line as src/crosswalk/csv.ts does (each good line
// mapped and audited `crosswalk.map` by the crosswalk, source `import`); the answer is a page with how many lines
// were imported and each refused line with its reason. The import itself is audited `crosswalk.import`.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { addressOf } from '../../app/admin-auth.ts';
import { CSV_MAX_BYTES, CsvFileRefused, type ImportResult, importCsv } from '../../crosswalk/csv.ts';
import { AppError } from '../../errors.ts';
import type { ConsoleContext } from '../deps.ts';
import { ConsolePageError } from '../errors.ts';
import { consoleAction, sendPage } from '../guard.ts';
import { html, type Html } from '../html.ts';
import { readMultipartForm } from '../multipart.ts';
import { NEEDS_MAPPING_PAGE } from './needs-mapping.ts';

/** Room for the form's other fields and the parts' headers beside the largest file taken. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

async function readImportForm(ctx: Context): Promise<URLSearchParams> {
  try {
    return await readMultipartForm(ctx, CSV_MAX_BYTES + FORM_OVERHEAD_BYTES);
  } catch (err) {
    if ((err as { status?: number }).status !== 413) throw err;
    throw new ConsolePageError(413, 'File too large', `A crosswalk file is at most ${CSV_MAX_BYTES} bytes. Split it, and import each part.`);
  }
}

/** The CSV the form carries: the file, or the pasted lines; or why there is none to import. */
function csvOf(form: URLSearchParams): { text: string } | { problem: string } {
  const file = form.get('file') ?? '';
  const pasted = form.get('csv') ?? '';
  if (file.trim() && pasted.trim()) return { problem: 'Choose a file or paste its lines, not both.' };
  const text = file.trim() ? file : pasted;
  return text.trim() ? { text } : { problem: 'Choose a CSV file or paste its lines.' };
}

function refusedLines(result: ImportResult): Html {
  if (result.refused.length === 0) return html`<p id="no-refused">No line was refused.</p>`;
  return html`<div class="scroll"><table id="import-refused"><thead><tr><th scope="col" class="num">Line</th><th scope="col">Reason</th></tr></thead>
<tbody>${result.refused.map((r) => html`<tr><td class="num">${r.line}</td><td class="reason">${r.reason}</td></tr>`)}</tbody></table></div>`;
}

async function resultPage(c: ConsoleContext, ctx: Context, body: Html): Promise<void> {
  await sendPage(c, ctx, {
    title: 'Crosswalk import',
    current: 'needs-mapping',
    body: html`${body}<p><a href="${NEEDS_MAPPING_PAGE}" id="back">Back to Needs mapping</a></p>`,
  });
}

export function registerCrosswalkImport(router: Router, c: ConsoleContext): void {
  if (!c.crosswalk) return;
  const crosswalk = c.crosswalk;
  router.post(
    '/needs-mapping/import',
    consoleAction(c, {
      action: 'crosswalk.import',
      needs: 'operator',
      what: 'Importing a crosswalk file',
      targets: () => [],
      form: readImportForm,
      async run(ctx, form, session) {
        const csv = csvOf(form);
        const refuse = async (message: string) => {
          ctx.status = 422;
          await resultPage(c, ctx, html`<p class="error" role="alert" id="import-refused-file">Nothing imported: ${message}</p>`);
          return 'refused' as const;
        };
        if ('problem' in csv) return refuse(csv.problem);
        let result: ImportResult;
        try {
          result = await importCsv(crosswalk, csv.text, { actor: session.actor.name, door: 'console', from: addressOf(ctx) });
        } catch (err) {
          if (err instanceof CsvFileRefused) return refuse(`${err.message}.`);
          if (!(err instanceof AppError && err.retryable)) throw err;
          // Lines before the EMR stopped answering are mapped; importing the file again maps them the same way.
          ctx.status = 503;
          await resultPage(
            c,
            ctx,
            html`<p class="error" role="alert" id="import-failed">The EMR stopped answering during the import (${err.code}). The lines before that were imported; import the file again once the EMR answers.</p>`,
          );
          return 'failed';
        }
        await resultPage(
          c,
          ctx,
          html`<section class="card" aria-labelledby="result-h"><h2 id="result-h">What was imported</h2>
<p role="status"><strong id="imported-count">${result.imported}</strong> ${result.imported === 1 ? 'line' : 'lines'} imported, <strong id="refused-count">${result.refused.length}</strong> refused.</p>
${refusedLines(result)}</section>`,
        );
        return 'ok';
      },
    }),
  );
}
