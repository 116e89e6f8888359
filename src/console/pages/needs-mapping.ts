// Needs mapping: the records the EMR owns that nobody has mapped yet (src/crosswalk/), each with how many events
// wait for it and since when, filtered by entity type, 50 a page. For each, the EMR's suggestions (by the name the
// service gave a doctor or location; a patient's name is never kept, so a patient shows its serviceId only) as
// choices beside a free EMR id, in a form that maps it: operator only, with the CSRF token; the crosswalk checks
// the EMR record exists and audits `crosswalk.map` with door `console`. A refusal is shown on the page (422), never
// a crash; a viewer reads the page without the forms. The bulk import's form is here, its POST ./needs-mapping-import.ts.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { canDo } from '../../actor.ts';
import { addressOf } from '../../app/admin-auth.ts';
import type { Crosswalk } from '../../crosswalk/crosswalk.ts';
import { CrosswalkRefusal } from '../../crosswalk/errors.ts';
import { CSV_HEADER, CSV_MAX_BYTES } from '../../crosswalk/csv.ts';
import { EMR_ID_MAX, idProblem, isCrosswalkEntityType, SERVICE_ID_MAX } from '../../crosswalk/values.ts';
import type { RecordSuggestion } from '../../emr/port.ts';
import { AppError } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../http/list-query.ts';
import { CROSSWALK_ENTITY_TYPES, type CrosswalkEntityType, type CrosswalkItem } from '../../storage/crosswalk.ts';
import type { LackedRecord } from '../../storage/processing.ts';
import type { ConsoleContext } from '../deps.ts';
import { ConsolePageError } from '../errors.ts';
import { param } from '../form.ts';
import { duration, when } from '../format.ts';
import { consoleAction, redirectWith, sendPage, sessionOf } from '../guard.ts';
import { csrfField } from '../csrf.ts';
import { html, type Html, query } from '../html.ts';
import type { ConsoleSession } from '../session.ts';
import { bytes } from './quarantine.ts';

export const NEEDS_MAPPING_PAGE = '/console/needs-mapping';
const PAGE_SIZE = 50;
/** EMR searches for one page's suggestions at a time: the page stays quick without a burst at the EMR. */
const SEARCHES_AT_ONCE = 6;

/** Where a page ends: its last record, as [entityType, serviceId]. */
const position = z.tuple([z.enum(CROSSWALK_ENTITY_TYPES), z.string().min(1).max(SERVICE_ID_MAX)]);

/** What the list shows: a type filter and the page's start, kept through a form and back. */
interface ListView {
  type?: CrosswalkEntityType;
  after?: string;
}

function viewOf(type: string | null | undefined, after: string | null | undefined): ListView {
  const t = type?.trim() || undefined;
  if (t !== undefined && !isCrosswalkEntityType(t))
    throw new ConsolePageError(400, 'No such entity type', `A record to map is a ${CROSSWALK_ENTITY_TYPES.join(', a ')}.`);
  const a = after?.trim() || undefined;
  return { ...(t ? { type: t } : {}), ...(a ? { after: a } : {}) };
}

function startOf(view: ListView): LackedRecord | undefined {
  if (!view.after) return undefined;
  try {
    const [entityType, serviceId] = decodeCursor(view.after, position);
    return { entityType, serviceId };
  } catch {
    throw new ConsolePageError(400, 'Bad page', 'That page position was not given out by this list. Start again from the first page.');
  }
}

const listUrl = (view: ListView): string => `${NEEDS_MAPPING_PAGE}${query({ type: view.type, after: view.after })}`;

/** The record a form names; a 400 page when it names none. */
function recordOf(entityType: string | null, serviceId: string | null): LackedRecord {
  const t = entityType?.trim() ?? '';
  const id = serviceId ?? '';
  if (!isCrosswalkEntityType(t) || idProblem('serviceId', id, SERVICE_ID_MAX))
    throw new ConsolePageError(400, 'No such record', `Name a record to map: an entity type (${CROSSWALK_ENTITY_TYPES.join(', ')}) and its serviceId.`);
  return { entityType: t, serviceId: id };
}

/** The EMR id a form asks for: a suggestion chosen or an id typed (not two different ones), or why it will not do. */
function emrIdOf(form: URLSearchParams): { emrId: string } | { emrId: string; problem: string } {
  const chosen = form.get('choice') ?? '';
  const typed = (form.get('emrId') ?? '').trim();
  if (chosen && typed && chosen !== typed) return { emrId: typed, problem: 'choose one of the suggestions or type an EMR id, not both' };
  const emrId = typed || chosen;
  if (!emrId) return { emrId, problem: 'choose one of the suggestions or type the EMR id' };
  const problem = idProblem('emrId', emrId, EMR_ID_MAX);
  return problem ? { emrId, problem } : { emrId };
}

/** A record's suggestions, or that the EMR did not answer for them. */
type Suggestions = RecordSuggestion[] | 'unavailable';

/** A mapping refused: the record, the EMR id asked for, and why. */
interface Refusal {
  record: LackedRecord;
  emrId: string;
  message: string;
}

/** `work` over `items`, `n` at a time, the answers in the items' order. */
async function inBatches<T, R>(items: readonly T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += n) out.push(...(await Promise.all(items.slice(i, i + n).map(work))));
  return out;
}

/** Each record's suggestions from the EMR; an EMR that does not answer gives none for that record, and it says so. */
function suggestionsOf(c: ConsoleContext, crosswalk: Crosswalk, items: readonly CrosswalkItem[]): Promise<Suggestions[]> {
  return inBatches(items, SEARCHES_AT_ONCE, async (item): Promise<Suggestions> => {
    try {
      return await crosswalk.suggestions({ entityType: item.entityType, serviceId: item.serviceId });
    } catch (err) {
      const e = err as { name?: string; code?: string };
      c.logger.warn({ entityType: item.entityType, serviceId: item.serviceId, err: { name: e.name, code: e.code } }, 'crosswalk suggestions failed');
      return 'unavailable';
    }
  });
}

function filterForm(view: ListView): Html {
  const options = CROSSWALK_ENTITY_TYPES.map((t) => html`<option value="${t}"${t === view.type ? html` selected` : ''}>${t}</option>`);
  return html`<form class="card search" method="get" action="${NEEDS_MAPPING_PAGE}" role="search" aria-label="Filter the records">
<div class="field"><label for="f-type">Entity type</label><select id="f-type" name="type"><option value="">any</option>${options}</select></div>
<div class="actions"><button type="submit">Show</button> <a href="${NEEDS_MAPPING_PAGE}">Clear</a></div>
</form>`;
}

function suggestionNote(item: CrosswalkItem, suggestions: Suggestions): Html | undefined {
  if (suggestions === 'unavailable') return html`<p class="muted">The EMR did not answer: no suggestions now.</p>`;
  if (suggestions.length) return undefined;
  if (item.entityType === 'patient')
    return html`<p class="muted">No name is kept for a patient: find the chart in the EMR by the name and phone the service has.</p>`;
  return html`<p class="muted">The EMR has no record by this name.</p>`;
}

/** What an operator maps a record with: the suggestions as choices, a free EMR id, the record and the list to come back to. */
function mapForm(i: number, item: CrosswalkItem, found: Suggestions, view: ListView, session: ConsoleSession, refusal?: Refusal): Html {
  const suggestions = found === 'unavailable' ? [] : found;
  const asked = refusal?.emrId ?? '';
  const chose = suggestions.some((s) => s.emrId === asked);
  const choices = suggestions.map(
    (s, j) =>
      html`<div class="choice"><input type="radio" id="s-${i}-${j}" name="choice" value="${s.emrId}"${chose && s.emrId === asked ? html` checked` : ''}><label for="s-${i}-${j}">${s.display} <code>${s.emrId}</code></label></div>`,
  );
  const error = refusal ? html`<p class="error-text" id="emr-${i}-error">${refusal.message}</p>` : '';
  return html`<form method="post" action="${NEEDS_MAPPING_PAGE}/map" class="map-form">
<fieldset><legend class="visually-hidden">The EMR record for ${item.entityType} ${item.serviceId}</legend>
${choices}${suggestionNote(item, found)}
<div class="field"><label for="emr-${i}">${suggestions.length ? 'Or its EMR id' : 'Its EMR id'}</label><input id="emr-${i}" name="emrId" maxlength="${EMR_ID_MAX}" autocomplete="off" value="${chose ? '' : asked}"${refusal ? html` aria-invalid="true" aria-describedby="emr-${i}-error"` : ''}></div>
${error}
<input type="hidden" name="entityType" value="${item.entityType}"><input type="hidden" name="serviceId" value="${item.serviceId}">
${view.type ? html`<input type="hidden" name="type" value="${view.type}">` : ''}${view.after ? html`<input type="hidden" name="after" value="${view.after}">` : ''}${csrfField(session.csrf)}
<div class="actions"><button type="submit" aria-label="Map ${item.entityType} ${item.serviceId}">Map</button></div>
</fieldset></form>`;
}

/** A viewer's cell: the suggestions to read, no form. */
function suggestionList(item: CrosswalkItem, suggestions: Suggestions): Html {
  if (suggestions === 'unavailable' || suggestions.length === 0) return suggestionNote(item, suggestions) ?? html``;
  return html`<ul class="choices">${suggestions.map((s) => html`<li>${s.display} <code>${s.emrId}</code></li>`)}</ul>`;
}

function row(c: ConsoleContext, ctx: Context, i: number, item: CrosswalkItem, suggestions: Suggestions, view: ListView, refusal?: Refusal): Html {
  const session = sessionOf(ctx);
  const since = item.waitingSince;
  const ago = since === null ? '' : html`<br><span class="muted">${duration(Math.max(0, c.clock.now() - since))} ago</span>`;
  const cell = canDo(session.actor, 'operator') ? mapForm(i, item, suggestions, view, session, refusal) : suggestionList(item, suggestions);
  return html`<tr id="rec-${i}">
<td>${item.entityType}</td><td><code>${item.serviceId}</code>${item.name ? html`<br>${item.name}` : ''}</td>
<td class="num">${item.waitingEvents}</td><td>${when(since)}${ago}</td>
<td>${cell}</td></tr>`;
}

/** The bulk import: a CSV file or its lines pasted (operator); a viewer is told who may. */
function importSection(session: ConsoleSession): Html {
  const form = canDo(session.actor, 'operator')
    ? html`<form method="post" action="${NEEDS_MAPPING_PAGE}/import" enctype="multipart/form-data" class="import-form">
<div class="field"><label for="csv-file">A CSV file</label><input id="csv-file" name="file" type="file" accept=".csv,text/csv"></div>
<div class="field"><label for="csv-text">Or its lines, pasted</label><textarea id="csv-text" name="csv" rows="5" spellcheck="false" placeholder="${CSV_HEADER}&#10;doctor,doc_1,pr-1001"></textarea></div>
${csrfField(session.csrf)}
<div class="actions"><button type="submit" id="import">Import</button></div></form>`
    : html`<p class="muted">Importing needs the <strong>operator</strong> role.</p>`;
  return html`<section class="card" aria-labelledby="import-h"><h2 id="import-h">Import a crosswalk file</h2>
<p>A CSV with the header <code>${CSV_HEADER}</code> (at most ${bytes(CSV_MAX_BYTES)}): the hospital's provider and department lists, each line mapping one record as the form above would. A line that will not do is refused with its reason and changes nothing; the others are mapped.</p>
${form}</section>`;
}

/** The page: the filter, a page of unmapped records with their suggestions and forms, and the import. */
async function renderList(c: ConsoleContext, ctx: Context, view: ListView, refusal?: Refusal): Promise<void> {
  const crosswalk = c.crosswalk!;
  const from = startOf(view);
  const rows = await crosswalk.list({
    state: 'unmapped',
    limit: PAGE_SIZE + 1,
    ...(view.type ? { entityType: view.type } : {}),
    ...(from ? { after: from } : {}),
  });
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown.at(-1);
  const next = rows.length > PAGE_SIZE && last ? encodeCursor([last.entityType, last.serviceId]) : undefined;
  const suggestions = await suggestionsOf(c, crosswalk, shown);
  const mine = (item: CrosswalkItem) => refusal?.record.entityType === item.entityType && refusal.record.serviceId === item.serviceId;
  const body = shown.map((item, i) => row(c, ctx, i, item, suggestions[i]!, view, mine(item) ? refusal : undefined));
  const refusedAt = shown.findIndex(mine);
  await sendPage(c, ctx, {
    title: 'Needs mapping',
    current: 'needs-mapping',
    body: html`${
      refusal
        ? html`<p class="error" role="alert" id="refusal">Not mapped: ${refusal.record.entityType} <code>${refusal.record.serviceId}</code>: ${refusal.message}.${
            refusedAt >= 0 ? html` <a href="#emr-${refusedAt}">To the record</a>` : ''
          }</p>`
        : ''
    }
<p class="muted">Records the EMR keeps to itself (its doctors and locations, perhaps its patients) that nobody has mapped yet. An event that needs one waits, using no attempt, until it is mapped; then it is applied within seconds, in order. Choose the EMR's record for each, or type its id.</p>
${filterForm(view)}
<section class="card" aria-labelledby="unmapped-h"><h2 id="unmapped-h">Unmapped records</h2>
${
  shown.length === 0
    ? html`<p id="no-unmapped">Nothing needs mapping${view.type ? html` among ${view.type}s` : ''}.</p>`
    : html`<div class="scroll"><table id="unmapped"><thead><tr><th scope="col">Entity</th><th scope="col">Service id, name</th><th scope="col" class="num">Waiting events</th><th scope="col">Waiting since</th><th scope="col">EMR record</th></tr></thead>
<tbody>${body}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${view.after ? html`<a href="${listUrl({ ...view, after: undefined })}">First page</a>` : ''}${
      next ? html`<a rel="next" href="${listUrl({ ...view, after: next })}">Next page</a>` : ''
    }</nav>
</section>
${importSection(sessionOf(ctx))}`,
  });
}

/** After a mapping: what happened, and how many events it frees. */
function mappedNotice(record: LackedRecord, emrId: string, waiting: number): string {
  const freed = waiting === 0 ? '' : `; ${waiting === 1 ? 'the event' : `the ${waiting} events`} waiting for it ${waiting === 1 ? 'is' : 'are'} taken up`;
  return `Mapped ${record.entityType} ${record.serviceId} to EMR id ${emrId}${freed}.`;
}

export function registerNeedsMapping(router: Router, c: ConsoleContext): void {
  if (!c.crosswalk) return;
  const crosswalk = c.crosswalk;
  router.get('/needs-mapping', (ctx) => renderList(c, ctx, viewOf(param(ctx, 'type'), param(ctx, 'after'))));
  router.post(
    '/needs-mapping/map',
    consoleAction(c, {
      action: 'crosswalk.map',
      needs: 'operator',
      what: 'Mapping a record',
      targets: (_ctx, form) => {
        const t = form.get('entityType');
        const id = form.get('serviceId');
        return t && id ? [`${t}:${id}`] : [];
      },
      async run(ctx, form, session) {
        const record = recordOf(form.get('entityType'), form.get('serviceId'));
        const view = viewOf(form.get('type'), form.get('after'));
        const asked = emrIdOf(form);
        const refuse = async (message: string, status = 422) => {
          ctx.status = status;
          await renderList(c, ctx, view, { record, emrId: asked.emrId, message });
        };
        if ('problem' in asked) {
          await refuse(asked.problem);
          return 'refused';
        }
        // Two people on one list: a record mapped since this page was drawn is left as the other person mapped it.
        const before = await crosswalk.get(record);
        if (before?.emrId) {
          await redirectWith(
            c,
            ctx,
            listUrl(view),
            `${record.entityType} ${record.serviceId} was mapped meanwhile, to EMR id ${before.emrId}: nothing changed.`,
          );
          return 'refused';
        }
        try {
          await crosswalk.map(record, asked.emrId, 'operator', { actor: session.actor.name, door: 'console', from: addressOf(ctx) });
        } catch (err) {
          // The crosswalk audited its refusal; an EMR that did not answer changed nothing and is audited here.
          if (err instanceof CrosswalkRefusal) {
            await refuse(err.message);
            return null;
          }
          if (err instanceof AppError && err.retryable) {
            await refuse(`the EMR did not answer (${err.code}); nothing changed, try again`, 503);
            return 'failed';
          }
          throw err;
        }
        await redirectWith(c, ctx, listUrl(view), mappedNotice(record, asked.emrId, before?.waitingEvents ?? 0));
        return null;
      },
    }),
  );
}
