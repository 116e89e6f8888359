// The clinic zero-configuration mode sets up on the bundled simulator. The default demo's is a bare one (the
// simulator makes a doctor and a location for each appointment). Beside the bundled FHIR server's vendor profile
// (FHIR_SERVER_PROFILE=vendor) it has a fixed roster: the doctors and locations of samples/crosswalk.csv, under
// its service ids and with the names of the EMR records the file maps them to (the profile's master data), in the
// time zone and the hours of the doctors' Schedules. The simulator's own appointments so name the EMR's doctors
// and start on the quarter hours it has Slots for, and the console's Needs mapping suggests each by its name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HumanName, Location, Practitioner, Resource, Schedule } from '@medplum/fhirtypes';
import type { Config } from '../config.ts';
import { type CsvMapping, readCsvMappings } from '../crosswalk/csv.ts';
import { ConfigError } from '../errors.ts';
import { type ClinicHours, clinicHoursOf } from '../fhir-server/vendor/clinic-hours.ts';
import { DEFAULT_MASTER_DATA_FILE, readMasterData } from '../fhir-server/vendor/master-data.ts';
import { SAMPLES_DIR } from '../paths.ts';

/** The vendor demo's roster, as the crosswalk import takes it: `npx emr-bridge crosswalk import samples/crosswalk.csv`. */
export const DEMO_CROSSWALK_FILE = join(SAMPLES_DIR, 'crosswalk.csv');

export type DemoProfile = 'default' | 'vendor';

/** The clinic a demo sets up: its profile (a known clinic of another is not reused) and the body of POST /_sim/clinics. */
export interface DemoClinic {
  profile: DemoProfile;
  body: Record<string, unknown>;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const nameText = (n: HumanName | undefined) => n?.text ?? [...(n?.prefix ?? []), ...(n?.given ?? []), n?.family].filter(Boolean).join(' ');

/** The clinic for the demo the settings run. */
export function demoClinicFor(config: Config): DemoClinic {
  const vendor = config.bundled.emr && config.emr.protocol === 'fhir' && config.emr.settings.serverProfile === 'vendor';
  if (!vendor) return { profile: 'default', body: {} };
  return { profile: 'vendor', body: vendorClinicBody(DEMO_CROSSWALK_FILE, DEFAULT_MASTER_DATA_FILE) };
}

/** The hours every roster doctor's Schedule keeps; they must agree, as the simulator keeps one set per clinic. */
function sharedHours(doctors: CsvMapping[], schedules: Schedule[], problems: string[]): ClinicHours | undefined {
  const each = doctors.map((d) => {
    const schedule = schedules.find((s) => s.actor?.some((a) => a.reference === `Practitioner/${d.emrId}`));
    const hours = schedule && clinicHoursOf(schedule).hours;
    if (!hours) problems.push(`doctor ${d.serviceId}: Practitioner/${d.emrId} has no Schedule with clinic hours`);
    return hours;
  });
  const [first] = each;
  const key = (h: ClinicHours | undefined) => h && JSON.stringify({ ...h, days: [...h.days].sort() });
  if (first && each.some((h) => h && key(h) !== key(first))) problems.push("the roster's doctors keep different clinic hours: the demo's clinic keeps one");
  return first;
}

/**
 * The vendor demo's POST /_sim/clinics body: the roster of `crosswalkFile` named after the records of
 * `masterDataFile`, the time zone and hours of the doctors' Schedules. A ConfigError names every problem.
 */
export function vendorClinicBody(crosswalkFile: string, masterDataFile: string): Record<string, unknown> {
  const problems: string[] = [];
  const csv = readCsvMappings(readFileSync(crosswalkFile, 'utf8'));
  for (const r of csv.refused) problems.push(`line ${r.line}: ${r.reason}`);
  const records = new Map<string, Resource>(readMasterData(masterDataFile).map((r) => [`${r.resourceType}/${r.id}`, r]));
  const rosterOf = (entityType: 'doctor' | 'location', type: 'Practitioner' | 'Location') =>
    csv.mappings
      .filter((m) => m.entityType === entityType)
      .flatMap((m) => {
        const record = records.get(`${type}/${m.emrId}`);
        const name = type === 'Location' ? (record as Location | undefined)?.name : nameText((record as Practitioner | undefined)?.name?.[0]);
        if (name) return [{ serviceId: m.serviceId, name }];
        problems.push(`${entityType} ${m.serviceId}: ${type}/${m.emrId} is not in ${masterDataFile} with a name`);
        return [];
      });
  const doctors = rosterOf('doctor', 'Practitioner');
  const locations = rosterOf('location', 'Location');
  if (!doctors.length || !locations.length) problems.push('the roster needs a doctor and a location at least');
  const schedules = [...records.values()].filter((r): r is Schedule => r.resourceType === 'Schedule');
  const hours = sharedHours(
    csv.mappings.filter((m) => m.entityType === 'doctor'),
    schedules,
    problems,
  );
  if (problems.length || !hours) throw new ConfigError(problems.map((p) => `the vendor demo's roster (${crosswalkFile}): ${p}`));
  return {
    timeZone: hours.timeZone,
    roster: { doctors, locations },
    appointmentHours: {
      days: WEEKDAYS.filter((_, i) => hours.days.has(i)),
      opens: hhmm(hours.opens),
      closes: hhmm(hours.closes),
      slotMinutes: hours.slotMinutes,
    },
  };
}
