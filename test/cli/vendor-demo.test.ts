// `FHIR_SERVER_PROFILE=vendor npm start` on a fresh data folder: `emr-bridge serve` runs the zero-configuration
// stack against the bundled FHIR server's vendor profile, booking into its Slots. The banner's try-it appointment
// names a doctor of the clinic's roster at a quarter hour of the clinic's hours, waits for its doctor and location
// (the EMR keeps its own) until `crosswalk import samples/crosswalk.csv` maps them in one import, and is then booked
// into that doctor's free Slot; `replay samples --fresh-ids` matches every verdict there; SIGTERM stops it all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { readBundledState } from '../../src/runtime/bundled-state.ts';
import { runCli } from '../support/cli.ts';
import { adapterFhirReader } from '../support/fhir-client.ts';
import { waitFor } from '../support/wait.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'emr-bridge-vendor-demo-'));
let child: Child | undefined;
afterAll(async () => {
  await child?.stop('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

// What a fresh machine has, and the one setting the vendor demo takes.
const env = { PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SERVICE_BASE_URL: '', FHIR_BASE_URL: '', ADMIN_TOKEN: '', FHIR_SERVER_PROFILE: 'vendor' };
// A second terminal: only the data folder.
const cli = (args: string[]) =>
  runCli(args, {
    DATA_DIR: dataDir,
    SERVICE_BASE_URL: '',
    FHIR_BASE_URL: '',
    ADMIN_TOKEN: '',
    SERVICE_KEY_ID: '',
    SERVICE_SIGNING_SECRETS: '',
    LOG_LEVEL: 'silent',
  });

type Snapshot = {
  serviceId: string;
  appointment: { startsAt: string; startsAtLocal: string };
  doctor: { serviceId: string; name: string };
  location: { serviceId: string; name: string };
};
type Waiting = { events: { state: string; attempts: number; waitingFor?: { entityType: string; serviceId: string } }[] };
type FhirAppointment = { id: string; status: string; start: string; slot: { reference: string }[]; participant: { actor: { reference: string } }[] };

const admin = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${child!.url}/admin${path}`, { headers: { authorization: `Bearer ${readBundledState(dataDir).adminToken}` } });
  return (await res.json()) as T;
};

describe('FHIR_SERVER_PROFILE=vendor npm start', () => {
  it("books the banner's try-it appointment into its doctor's Slot once samples/crosswalk.csv is imported, and replays the samples with every verdict matched", async () => {
    child = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 30_000 });
    const banner = await waitFor(() => {
      const out = child!.output();
      const service = /^\s+service\s+(http\S+)/m.exec(out)?.[1];
      const fhir = /^\s+FHIR R4 EMR\s+(http\S+)\s+\(bundled FHIR server, vendor profile, sign-in: smart, booking into Slots\)/m.exec(out)?.[1];
      const clinicId = /"clinicId":"([^"]+)"/.exec(out)?.[1];
      return service && fhir && clinicId ? { service, fhir, clinicId, out } : undefined;
    });
    expect(banner.out).toContain('npx emr-bridge crosswalk import samples/crosswalk.csv');

    // The try-it line, as a person pastes it.
    const res = await fetch(`${banner.service}/_sim/appointments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clinicId: banner.clinicId }),
    });
    const created = (await res.json()) as Snapshot;
    expect(res.status).toBe(201);
    expect([created.doctor, created.location]).toEqual([
      { serviceId: 'doc_okafor', externalId: null, name: 'Dr Amara Okafor' },
      { serviceId: 'loc_room1', externalId: null, name: 'Room 1' },
    ]);
    // A quarter hour of the clinic's hours (08:00 to 18:00, New York time).
    expect(created.appointment.startsAtLocal).toMatch(/T(0[89]|1[0-7]):(00|15|30|45):00\.000-0[45]:00$/);

    const waiting = await waitFor(async () => (await admin<Waiting>('/events?state=waiting')).events[0], 15_000);
    expect(waiting).toMatchObject({ attempts: 0, waitingFor: { entityType: 'doctor', serviceId: 'doc_okafor' } });

    const imported = await cli(['crosswalk', 'import', 'samples/crosswalk.csv']);
    expect(imported.code, imported.out).toBe(0);
    expect(JSON.parse(imported.out)).toEqual({ imported: 7, refused: [] });

    const fhir = adapterFhirReader(dataDir, banner.fhir);
    const byServiceId = `Appointment?identifier=${encodeURIComponent(`urn:emr-bridge:service|${created.serviceId}`)}`;
    const [booked] = await waitFor(async () => {
      const bundle = (await fhir.call<{ entry?: { resource: FhirAppointment }[] }>('GET', byServiceId)).body;
      return bundle.entry?.length ? bundle.entry.map((e) => e.resource) : undefined;
    }, 10_000);
    await fhir.close();
    // Dr Okafor's Schedule is sch-3001; a generated Slot's id is its Schedule's and its start's.
    const slotId = `sch-3001-${created.appointment.startsAt.replace(/[-:]/g, '').slice(0, 13)}Z`;
    expect(booked).toMatchObject({ status: 'booked', start: created.appointment.startsAt, slot: [{ reference: `Slot/${slotId}` }] });
    expect(booked!.participant.map((p) => p.actor.reference.split('/')[0])).toEqual(['Patient']);
    const slot = await cli(['fhir-get', `Slot/${slotId}`]);
    expect(slot.code, slot.out).toBe(0);
    expect(JSON.parse(slot.out)).toMatchObject({ status: 'busy' });

    const replay = await cli(['replay', 'samples', '--fresh-ids']);
    expect(replay.code, replay.out).toBe(0);
    expect(replay.out).toMatch(/booking into Slots: 2 doctors and 2 locations of the samples mapped/);
    expect(replay.out).toMatch(/\n20 matched, 0 mismatched\n/);

    expect(await child.stop('SIGTERM')).toBe(0);
  }, 120_000);
});
