// The crosswalk's admin routes (src/crosswalk/admin-router.ts) as the OpenAPI document describes them, with their
// answers' schemas; ./admin.ts adds them to the adapter's document.
import { z } from 'zod';
import { CSV_HEADER, CSV_MAX_BYTES, CSV_MAX_LINES } from '../crosswalk/csv.ts';
import { type crosswalkItemView, crosswalkListParams, mapBody } from '../crosswalk/admin-router.ts';
import { EMR_ID_MAX, SERVICE_ID_MAX } from '../crosswalk/values.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/list-query.ts';
import { named } from '../openapi/describe.ts';
import type { RouteDescription } from '../openapi/describe.ts';
import { type RouteDefaults, reply, routesOf } from '../openapi/route.ts';
import { CROSSWALK_ENTITY_TYPES, CROSSWALK_SOURCES } from '../storage/crosswalk.ts';

const item = z.strictObject({
  entityType: z.enum(CROSSWALK_ENTITY_TYPES),
  serviceId: z.string(),
  name: z.string().nullable().describe("A doctor's or location's name as the service sent it; null for a patient (never kept)."),
  emrId: z.string().nullable().describe("The EMR record's id; null while unmapped."),
  waitingEvents: z.number().int().describe('Events waiting that lack this record.'),
  source: z
    .enum(CROSSWALK_SOURCES)
    .nullable()
    .describe(
      "Who set the mapping: an operator, a CSV import, the service's snapshot (externalId) or the EMR (its record carries the service's id); null while unmapped.",
    ),
  updatedAt: z.string().describe('ISO 8601 time (UTC)'),
});

// What the code returns must be what the schema allows (checked by the compiler).
type Covers<Schema extends z.ZodType, Actual extends z.output<Schema>> = Actual;
export type CrosswalkAnswersCovered = [Covers<typeof item, ReturnType<typeof crosswalkItemView>>];

const schemas = {
  page: named(
    'CrosswalkPage',
    z.strictObject({
      items: z.array(item),
      nextCursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
    }),
  ),
  item: named('CrosswalkItem', item),
  mapRequest: named('CrosswalkMapRequest', mapBody),
  suggestions: named(
    'CrosswalkSuggestions',
    z.strictObject({
      items: z.array(
        z.strictObject({ emrId: z.string(), display: z.string().describe('What a person recognises it by: a name (a patient: name and phone).') }),
      ),
    }),
  ),
  csv: named('CrosswalkCsv', z.string().describe(`${CSV_HEADER}, then one mapping a line (RFC 4180 quoting).`)),
  imported: named(
    'CrosswalkImported',
    z.strictObject({
      imported: z.number().int().describe('Lines mapped (each as a PUT would).'),
      refused: z
        .array(z.strictObject({ line: z.number().int().describe("The file's line number, the header being line 1."), reason: z.string() }))
        .describe('Each line refused, with why; a refused line changed nothing.'),
    }),
  ),
};

const badRecord = `invalid_request: entityType is not patient, doctor or location, or serviceId is empty, longer than ${SERVICE_ID_MAX} characters, or holds a control character (the field is named).`;
const refusal =
  'A refused mapping, nothing changed: emr_record_not_found (the EMR has no such record), patient_chart_taken (another service patient has that EMR patient: one person, one chart), mapped_by_adapter (the adapter already stands this record for another EMR record).';

const emrUnasked = 'The EMR could not be asked (down, refusing, in planned downtime; the code says which): nothing changed.';

export function crosswalkRoutes(defaults: Omit<RouteDefaults, 'tag'>, operator: Record<number, string>): RouteDescription[] {
  return routesOf({ tag: 'crosswalk', ...defaults }, (route) => [
    route('get /admin/crosswalk', 'listCrosswalk', 'The crosswalk: service records and the EMR records they stand for, with the events waiting for each', {
      description: 'In (entityType, serviceId) order. A record appears unmapped as soon as an event needs it and it has no EMR record the adapter may use.',
      query: {
        entityType: { schema: crosswalkListParams.entityType, description: 'Only this entity type.' },
        state: { schema: crosswalkListParams.state, description: 'Only mapped, or only unmapped, records.' },
        cursor: { schema: crosswalkListParams.cursor, description: "The previous page's nextCursor." },
        limit: { schema: crosswalkListParams.limit, description: `Records per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` },
      },
      responses: { 200: reply('A page.', schemas.page) },
      errors: { 400: 'invalid_request: a bad or unknown parameter (named in `field`).' },
    }),
    route('put /admin/crosswalk/{entityType}/{serviceId}', 'mapCrosswalk', 'Map a service record to an EMR record', {
      description:
        "The EMR record is read first (FHIR: `GET Practitioner/{emrId}`, `Location/…`, `Patient/…`; an HL7 v2 EMR cannot be asked, so its id is taken as given). Made under the entity's lock; the events waiting for it are taken up within 5 s on any replica, and the mapping is posted to the service once (externalId = emrId). Audited as crosswalk.map.",
      body: schemas.mapRequest,
      responses: { 200: reply('Mapped: the record as it now stands.', schemas.item) },
      errors: {
        ...operator,
        400: `${badRecord} Or emrId is empty, longer than ${EMR_ID_MAX} characters, or holds a control character.`,
        422: refusal,
        502: emrUnasked,
      },
    }),
    route('delete /admin/crosswalk/{entityType}/{serviceId}', 'unmapCrosswalk', "Remove a record's mapping: later events need one again", {
      description:
        "Events already applied keep their records; one in flight finishes with the record it resolved; later ones wait for a mapping (a snapshot's externalId fills it again). Audited as crosswalk.unmap.",
      responses: { 204: reply('Removed.') },
      errors: { ...operator, 400: badRecord, 404: 'not_found: the record has no mapping.' },
    }),
    route('get /admin/crosswalk/{entityType}/{serviceId}/suggestions', 'crosswalkSuggestions', "The EMR's records a person may choose from for this record", {
      description:
        "Searched in the EMR by the name the service gave it (a doctor's or location's, as listed); for a patient, by the name and phone of the newest event waiting for it, read then and never kept. Empty when there is nothing to search by, or the EMR cannot be searched (HL7 v2).",
      responses: { 200: reply('The matches, best first.', schemas.suggestions) },
      errors: { 400: badRecord, 502: emrUnasked },
    }),
    route('post /admin/crosswalk/import', 'importCrosswalk', 'Import mappings from CSV, line by line', {
      description: `The header \`${CSV_HEADER}\` first. Each line is checked and mapped as a PUT is; a refused line (unknown entity type, a bad id, an EMR record that does not exist, a patient chart given to two service patients, one the EMR could not be asked about now) changes nothing and is listed with its reason. At most ${CSV_MAX_BYTES} bytes and ${CSV_MAX_LINES} lines. Audited as crosswalk.import, and each line mapped as crosswalk.map.`,
      body: { schema: schemas.csv, contentType: 'text/csv' },
      responses: { 200: reply('What was imported, and each line refused.', schemas.imported) },
      errors: {
        ...operator,
        400: 'invalid_csv: the first line is not the header; nothing was imported.',
        413: `file_too_large: more than ${CSV_MAX_BYTES} bytes or ${CSV_MAX_LINES} lines; nothing was imported.`,
        415: 'unsupported_media_type: the body is not text/csv.',
      },
    }),
    route('get /admin/crosswalk/export', 'exportCrosswalk', 'Every mapping in the crosswalk, whatever set it, as the CSV import reads it', {
      responses: { 200: { description: `\`${CSV_HEADER}\`, then one mapping a line.`, contentType: 'text/csv', body: { type: 'string' } } },
    }),
  ]);
}
