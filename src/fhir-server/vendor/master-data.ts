// The vendor profile's master data: the hospital's own practitioners, locations and their schedules (each with its
// clinic hours, from which the Slots are made: ./slot-book.ts), read from a FHIR collection Bundle
// (samples/emr-master-data.json by default) and written at start under their fixed ids, past the profile's refusals
// (the hospital's staff keep these records, not its outside writers). A record the data file already holds as
// given is left alone, so a restart makes no new versions.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resource, Schedule } from '@medplum/fhirtypes';
import { ConfigError } from '../../errors.ts';
import { SAMPLES_DIR } from '../../paths.ts';
import type { FhirHandler } from '../fhir-handler.ts';
import { clinicHoursOf } from './clinic-hours.ts';

export const DEFAULT_MASTER_DATA_FILE = join(SAMPLES_DIR, 'emr-master-data.json');

/** What master data may hold: the records an outside writer may not create, and the schedules' Slots. */
const MASTER_TYPES = new Set(['Practitioner', 'Location', 'Schedule', 'Slot']);
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

type MasterRecord = Resource & { id: string };

function problemsOf(resources: unknown[]): string[] {
  const seen = new Set<string>();
  return resources.flatMap((r, i) => {
    const { resourceType, id } = (r ?? {}) as { resourceType?: unknown; id?: unknown };
    if (typeof resourceType !== 'string' || !MASTER_TYPES.has(resourceType)) return [`entry ${i}: resourceType must be one of ${[...MASTER_TYPES].join(', ')}`];
    if (typeof id !== 'string' || !FHIR_ID.test(id)) return [`entry ${i}: ${resourceType} needs a fixed id (letters, digits, - and ., at most 64)`];
    const key = `${resourceType}/${id}`;
    if (seen.has(key)) return [`entry ${i}: ${key} appears twice`];
    seen.add(key);
    if (resourceType !== 'Schedule') return [];
    const hours = clinicHoursOf(r as Schedule);
    // A generated Slot's id is the Schedule's and 15 more characters (./slot-book.ts), within FHIR's 64.
    if (hours.hours && id.length > 49) hours.problems.push('a Schedule with clinic hours needs an id of at most 49 characters');
    return hours.problems.map((p) => `entry ${i}: ${key}: ${p}`);
  });
}

/** The file's records, checked; a ConfigError naming the file and every problem otherwise. */
export function readMasterData(file: string): MasterRecord[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError([`master data ${file}: ${(err as Error).message}`]);
  }
  const bundle = parsed as { resourceType?: unknown; type?: unknown; entry?: unknown };
  if (bundle?.resourceType !== 'Bundle' || bundle.type !== 'collection' || !Array.isArray(bundle.entry))
    throw new ConfigError([`master data ${file}: must be a FHIR Bundle of type collection with an entry list`]);
  const resources = bundle.entry.map((e) => (e as { resource?: unknown } | null)?.resource);
  const problems = problemsOf(resources);
  if (problems.length) throw new ConfigError(problems.map((p) => `master data ${file}: ${p}`));
  return resources as MasterRecord[];
}

/** Everything but what the server stamps, for comparing a held record with the file's. */
function content(r: Resource): string {
  const { meta: _meta, ...rest } = r;
  return JSON.stringify(rest);
}

/** Writes each record the store does not hold as given; the count written. */
export async function loadMasterData(fhir: FhirHandler, records: MasterRecord[], file: string): Promise<number> {
  let written = 0;
  for (const record of records) {
    const url = `/${record.resourceType}/${record.id}`;
    const held = await fhir({ method: 'GET', url, headers: {}, body: undefined });
    if (held.status === 200 && content(held.body as Resource) === content(record)) continue;
    const put = await fhir({ method: 'PUT', url, headers: {}, body: record });
    if (put.status >= 300) throw new ConfigError([`master data ${file}: ${url} was refused (${put.status}): ${JSON.stringify(put.body)}`]);
    written++;
  }
  return written;
}
