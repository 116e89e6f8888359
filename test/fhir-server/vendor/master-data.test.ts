// The vendor profile's master data (samples/emr-master-data.json) over HTTP: each practitioner and location under
// its fixed id, found by name and by the EMR's own identifiers, each practitioner's Schedule; a patient found by
// name and phone (the searches the adapter's mapping suggestions make); kept across a restart without new
// versions; and a master data file that is not what it must be (clinic hours included) stops the start with the reason.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.ts';
import { startFhirServer, type RunningFhirServer } from '../../../src/fhir-server/server.ts';
import { silentLogger } from '../../../src/logger.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-vendor-'));
let servers: RunningFhirServer[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(opts: { dataFile?: string; masterDataFile?: string; port?: number } = {}): Promise<RunningFhirServer> {
  const s = await startFhirServer({ port: opts.port ?? 0, logger: silentLogger(), profile: 'vendor', ...opts });
  servers.push(s);
  return s;
}

interface Found {
  id: string;
  meta: { versionId: string };
  name?: unknown;
  actor?: { reference: string }[];
}

const read = async (base: string, path: string) => (await (await fetch(`${base}/${path}`)).json()) as Found;
const ids = async (base: string, query: string) =>
  (((await (await fetch(`${base}/${query}`)).json()) as { entry?: { resource: Found }[] }).entry ?? []).map((e) => e.resource.id);

const PRACTITIONERS = ['pr-1001', 'pr-1002', 'pr-1003', 'pr-1004'];

describe('vendor profile: master data', () => {
  it('serves every practitioner and location under its fixed id', async () => {
    const { baseUrl } = await start();
    expect(await ids(baseUrl, 'Practitioner')).toEqual(PRACTITIONERS);
    expect(await ids(baseUrl, 'Location')).toEqual(['loc-2001', 'loc-2002', 'loc-2003']);
    expect((await read(baseUrl, 'Practitioner/pr-1001')).name).toEqual([
      { use: 'official', text: 'Dr Amara Okafor', family: 'Okafor', given: ['Amara'], prefix: ['Dr'] },
    ]);
  });

  it.each([
    ['a family name', 'Practitioner?name=Okafor', ['pr-1001']],
    ['the name as the service writes it', 'Practitioner?name=Dr%20Benjamin%20Hartley', ['pr-1002']],
    ['a given name, any case', 'Practitioner?name=lena', ['pr-1003']],
    ["a location's name", 'Location?name=Room%202', ['loc-2002']],
    ['the NPI', 'Practitioner?identifier=http://hl7.org/fhir/sid/us-npi|1999000049', ['pr-1004']],
    ["the EMR's personnel number", 'Practitioner?identifier=urn:oid:2.16.840.1.113883.19.5.1|4102', ['pr-1002']],
    ["the EMR's location code", 'Location?identifier=urn:oid:2.16.840.1.113883.19.5.2|5203', ['loc-2003']],
    ['a name nobody has', 'Practitioner?name=Nobody', []],
  ])('finds master data by %s', async (_by, query, expected) => {
    const { baseUrl } = await start();
    expect(await ids(baseUrl, query)).toEqual(expected);
  });

  it("gives each practitioner a Schedule whose actor is that practitioner, in the clinic's time zone", async () => {
    const { baseUrl } = await start();
    for (const id of PRACTITIONERS) {
      const schedules = await ids(baseUrl, `Schedule?actor=Practitioner/${id}`);
      expect(schedules).toHaveLength(1);
      const schedule = (await read(baseUrl, `Schedule/${schedules[0]}`)) as Found & { extension: { url: string; valueCode: string }[] };
      expect(schedule.extension).toContainEqual({ url: 'http://hl7.org/fhir/StructureDefinition/timezone', valueCode: 'America/New_York' });
    }
  });

  it('finds a patient by name and phone, and not by the name with another phone', async () => {
    const { baseUrl } = await start();
    const created = await fetch(`${baseUrl}/Patient`, {
      method: 'POST',
      headers: { 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Patient', name: [{ given: ['Maria'], family: 'Lopez' }], telecom: [{ system: 'phone', value: '+15550301234' }] }),
    });
    const { id } = (await created.json()) as Found;
    expect(await ids(baseUrl, `Patient?name=Maria%20Lopez&phone=${encodeURIComponent('+15550301234')}`)).toEqual([id]);
    expect(await ids(baseUrl, `Patient?name=Lopez&phone=${encodeURIComponent('+15550309999')}`)).toEqual([]);
  });

  it('keeps the master data across a restart with a data file, as the same versions', async () => {
    const dataFile = join(dir, 'vendor.jsonl');
    const first = await start({ dataFile });
    const before = await read(first.baseUrl, 'Practitioner/pr-1001');
    await first.close();
    const second = await start({ dataFile, port: first.port });
    expect((await read(second.baseUrl, 'Practitioner/pr-1001')).meta.versionId).toBe(before.meta.versionId);
  });
});

describe('vendor profile: a master data file that is not what it must be', () => {
  const bundle = (...resources: object[]) => ({ resourceType: 'Bundle', type: 'collection', entry: resources.map((resource) => ({ resource })) });

  it.each([
    ['not JSON', '{nope', /master data .*JSON/],
    ['not a collection Bundle', JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [] }), /Bundle of type collection/],
    ['a Patient', JSON.stringify(bundle({ resourceType: 'Patient', id: 'p1' })), /entry 0: resourceType must be one of/],
    ['a practitioner with no id', JSON.stringify(bundle({ resourceType: 'Practitioner' })), /entry 0: Practitioner needs a fixed id/],
    [
      'one id twice',
      JSON.stringify(bundle({ resourceType: 'Location', id: 'l1', name: 'A' }, { resourceType: 'Location', id: 'l1', name: 'B' })),
      /entry 1: Location\/l1 appears twice/,
    ],
    [
      'clinic hours with no time zone',
      JSON.stringify(
        bundle({
          resourceType: 'Schedule',
          id: 's1',
          actor: [{ reference: 'Practitioner/p1' }],
          extension: [{ url: 'https://emr-bridge.dev/fhir/StructureDefinition/clinic-hours', extension: [{ url: 'daysOfWeek', valueCode: 'mon' }] }],
        }),
      ),
      /entry 0: Schedule\/s1: clinic hours need a known time zone/,
    ],
  ])('refuses to start on %s, saying why', async (what, text, reason) => {
    const masterDataFile = join(dir, `${what.replaceAll(' ', '-')}.json`);
    writeFileSync(masterDataFile, text);
    const started = start({ masterDataFile });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(reason);
  });
});
