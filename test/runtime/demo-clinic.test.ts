// The clinic zero-configuration mode sets up: a bare one for the default demo; beside the vendor profile, the
// roster of samples/crosswalk.csv named after the master data's records, in the hours of their Schedules, or a
// start-up error naming every problem with the files.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { DEFAULT_MASTER_DATA_FILE } from '../../src/fhir-server/vendor/master-data.ts';
import { DEMO_CROSSWALK_FILE, demoClinicFor, vendorClinicBody } from '../../src/runtime/demo-clinic.ts';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function files(csv: string, master?: (bundle: { entry: { resource: Record<string, unknown> }[] }) => void): { csv: string; master: string } {
  dir = mkdtempSync(join(tmpdir(), 'emr-bridge-demo-clinic-'));
  const bundle = JSON.parse(readFileSync(DEFAULT_MASTER_DATA_FILE, 'utf8'));
  master?.(bundle);
  writeFileSync(join(dir, 'crosswalk.csv'), csv);
  writeFileSync(join(dir, 'master.json'), JSON.stringify(bundle));
  return { csv: join(dir, 'crosswalk.csv'), master: join(dir, 'master.json') };
}

const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
};

describe("the demo's clinic", () => {
  it('is a bare one for the default demo, and the roster beside the vendor profile', () => {
    expect(demoClinicFor(parseConfig({ DATA_DIR: tmpdir() }))).toEqual({ profile: 'default', body: {} });
    expect(demoClinicFor(parseConfig({ DATA_DIR: tmpdir(), FHIR_SERVER_PROFILE: 'vendor' })).profile).toBe('vendor');
  });

  it("names samples/crosswalk.csv's doctors and locations as the master data does, in the clinic hours of their Schedules", () => {
    expect(vendorClinicBody(DEMO_CROSSWALK_FILE, DEFAULT_MASTER_DATA_FILE)).toEqual({
      timeZone: 'America/New_York',
      roster: {
        doctors: [
          { serviceId: 'doc_okafor', name: 'Dr Amara Okafor' },
          { serviceId: 'doc_hartley', name: 'Dr Benjamin Hartley' },
          { serviceId: 'doc_fischer', name: 'Dr Lena Fischer' },
          { serviceId: 'doc_moreno', name: 'Dr Rafael Moreno' },
        ],
        locations: [
          { serviceId: 'loc_room1', name: 'Room 1' },
          { serviceId: 'loc_room2', name: 'Room 2' },
          { serviceId: 'loc_room3', name: 'Room 3' },
        ],
      },
      appointmentHours: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], opens: '08:00', closes: '18:00', slotMinutes: 15 },
    });
  });

  it('names every problem: a bad line, a record the master data lacks, doctors keeping different hours', () => {
    const f = files('entityType,serviceId,emrId\ndoctor,doc_okafor,pr-1001\ndoctor,doc_hartley,pr-1002\nnurse,n_1,x\nlocation,loc_x,loc-9999\n', (bundle) => {
      const schedule = bundle.entry.find((e) => e.resource.id === 'sch-3002')!.resource as { extension: { url: string; extension?: { url: string }[] }[] };
      const hours = schedule.extension.find((e) => e.extension)!;
      hours.extension = hours.extension!.map((e) => (e.url === 'closingTime' ? { url: 'closingTime', valueTime: '12:00:00' } : e));
    });

    const problems = problemsOf(() => vendorClinicBody(f.csv, f.master)).map((p) => p.replace(`the vendor demo's roster (${f.csv}): `, ''));

    expect(problems).toEqual([
      'line 4: unknown entity type "nurse": patient, doctor or location',
      `location loc_x: Location/loc-9999 is not in ${f.master} with a name`,
      'the roster needs a doctor and a location at least',
      "the roster's doctors keep different clinic hours: the demo's clinic keeps one",
    ]);
  });
});
