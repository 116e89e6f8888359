// The crosswalk as CSV (`entityType,serviceId,emrId`, a header line first): an import checks every line, refuses
// a bad one with its line number and reason (that line changes nothing; one the EMR could not be asked about now
// too), and maps each good one as a person's PUT would; the export writes every mapping in the crosswalk, whatever
// set it. Lines are RFC 4180: a field may be quoted, a quote inside one doubled.
import type { CrosswalkStore } from '../storage/crosswalk.ts';
import type { Crosswalk, Requester } from './crosswalk.ts';
import { AppError } from '../errors.ts';
import { CrosswalkRefusal } from './errors.ts';
import { EMR_ID_MAX, idProblem, isCrosswalkEntityType, SERVICE_ID_MAX } from './values.ts';

export const CSV_HEADER = 'entityType,serviceId,emrId';
/** The largest file taken, in bytes. */
export const CSV_MAX_BYTES = 1024 * 1024;
/** The most lines taken (the header aside). */
export const CSV_MAX_LINES = 20_000;

export interface ImportResult {
  imported: number;
  /** `line`: the file's line number, the header being line 1. */
  refused: { line: number; reason: string }[];
}

/** A refusal of the whole file (too large, no header): nothing is imported. */
export class CsvFileRefused extends Error {
  constructor(
    readonly kind: 'too_large' | 'no_header',
    message: string,
  ) {
    super(message);
  }
}

/** One line's fields; undefined when its quoting is broken. */
function fieldsOf(line: string): string[] | undefined {
  const fields: string[] = [];
  let at = 0;
  while (at <= line.length) {
    if (line[at] === '"') {
      let value = '';
      let i = at + 1;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote < 0) return undefined;
        value += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
          continue;
        }
        at = quote + 1;
        break;
      }
      fields.push(value);
      if (at < line.length && line[at] !== ',') return undefined;
      at++;
    } else {
      const comma = line.indexOf(',', at);
      const end = comma < 0 ? line.length : comma;
      fields.push(line.slice(at, end));
      at = end + 1;
    }
  }
  return fields;
}

/** The line's mapping, or the reason it is refused. */
function parseLine(line: string): { entityType: 'patient' | 'doctor' | 'location'; serviceId: string; emrId: string } | string {
  const fields = fieldsOf(line);
  if (!fields) return 'a quoted field is not closed';
  if (fields.length !== 3) return `expected 3 fields (${CSV_HEADER}), found ${fields.length}`;
  const [entityType, serviceId, emrId] = fields as [string, string, string];
  if (!isCrosswalkEntityType(entityType)) return `unknown entity type ${JSON.stringify(entityType.slice(0, 40))}: patient, doctor or location`;
  const problem = idProblem('serviceId', serviceId, SERVICE_ID_MAX) ?? idProblem('emrId', emrId, EMR_ID_MAX);
  return problem ?? { entityType, serviceId, emrId };
}

/** The file's lines, its header first; a file too large or without the header is refused whole. */
function linesOf(text: string): string[] {
  if (Buffer.byteLength(text, 'utf8') > CSV_MAX_BYTES) throw new CsvFileRefused('too_large', `the file is larger than ${CSV_MAX_BYTES} bytes`);
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  if (lines[0]?.trim() !== CSV_HEADER) throw new CsvFileRefused('no_header', `the first line must be the header ${CSV_HEADER}`);
  if (lines.length - 1 > CSV_MAX_LINES) throw new CsvFileRefused('too_large', `the file has more than ${CSV_MAX_LINES} lines`);
  return lines;
}

/** One good line of a crosswalk CSV. */
export type CsvMapping = Exclude<ReturnType<typeof parseLine>, string>;

/**
 * A crosswalk CSV read without mapping anything (a demo's roster, the replay's): its good lines, and each bad one
 * with its line number and reason. A file too large or without the header is refused whole (CsvFileRefused).
 */
export function readCsvMappings(text: string): { mappings: CsvMapping[]; refused: ImportResult['refused'] } {
  const result: ReturnType<typeof readCsvMappings> = { mappings: [], refused: [] };
  for (const [i, line] of linesOf(text).entries()) {
    if (i === 0 || line.trim() === '') continue;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') result.refused.push({ line: i + 1, reason: parsed });
    else result.mappings.push(parsed);
  }
  return result;
}

/** Imports `text` line by line; each good line is mapped as an operator's PUT would be. */
export async function importCsv(crosswalk: Crosswalk, text: string, who: Requester): Promise<ImportResult> {
  const lines = linesOf(text);
  const result: ImportResult = { imported: 0, refused: [] };
  // One patient chart per person within the file too: the second line naming a chart already taken is refused.
  const charts = new Map<string, string>();
  for (const [i, line] of lines.entries()) {
    if (i === 0 || line.trim() === '') continue;
    const parsed = parseLine(line);
    const refuse = (reason: string) => result.refused.push({ line: i + 1, reason });
    if (typeof parsed === 'string') {
      refuse(parsed);
      continue;
    }
    const holder = parsed.entityType === 'patient' ? charts.get(parsed.emrId) : undefined;
    if (holder !== undefined && holder !== parsed.serviceId) {
      refuse(`EMR patient ${parsed.emrId} is mapped to service patient ${holder} on an earlier line: one person, one chart`);
      continue;
    }
    try {
      await crosswalk.map({ entityType: parsed.entityType, serviceId: parsed.serviceId }, parsed.emrId, 'import', who);
      if (parsed.entityType === 'patient') charts.set(parsed.emrId, parsed.serviceId);
      result.imported++;
    } catch (err) {
      // The EMR (or the store) could not answer for this line: it changed nothing, and says so, so the file is
      // never left half-imported without a word on which lines went in. Importing the file again is harmless.
      if (err instanceof AppError && err.retryable && !(err instanceof CrosswalkRefusal)) {
        refuse(`not imported now (${err.code}: ${err.message}); import this line again`);
        continue;
      }
      if (!(err instanceof CrosswalkRefusal)) throw err;
      refuse(err.message);
    }
  }
  return result;
}

/** A field as CSV writes it: quoted when it holds a comma, a quote or a line break. */
const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** Every mapping in the crosswalk, whatever set it, as the import reads it. */
export async function exportCsv(store: Pick<CrosswalkStore, 'allMapped'>): Promise<string> {
  const rows = await store.allMapped();
  return `${[CSV_HEADER, ...rows.map((r) => [r.entityType, r.serviceId, r.emrId].map(csvField).join(','))].join('\n')}\n`;
}
