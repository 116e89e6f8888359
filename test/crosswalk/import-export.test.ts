// The crosswalk as CSV over HTTP: an import maps each good line as a PUT would and refuses each bad one with its
// line number and reason (that line changes nothing), posts each mapping to the service once, and is refused whole
// when the file is too large or has no header; only an operator imports. The export lists every mapping, whatever
// set it, in the form the import reads back.
import { describe, expect, it } from 'vitest';
import { CSV_MAX_BYTES, CSV_MAX_LINES } from '../../src/crosswalk/csv.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { type CrosswalkAdmin, crosswalkAdmin } from '../support/crosswalk-admin.ts';

const HEADER = 'entityType,serviceId,emrId';
const csv = (...lines: string[]) => `${[HEADER, ...lines].join('\n')}\n`;
const importAs = (a: CrosswalkAdmin, who: 'operator' | 'viewer', text: string) =>
  a.send(who, 'post', '/crosswalk/import').set('content-type', 'text/csv').send(text);
const mapped = async (a: CrosswalkAdmin) => (await a.crosswalk.list({ state: 'mapped', limit: 100 })).map((i) => `${i.entityType}:${i.serviceId}=${i.emrId}`);

describe('POST /admin/crosswalk/import', () => {
  it('maps the good lines and refuses each bad one with its line and reason, changing nothing for it', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const chart = a.f.emr.addEmrPatient({ name: 'Test Patient One', phone: '+15550000001' });
    const taken = a.f.emr.addEmrPatient({ name: 'Test Patient Nine', phone: '+15550000009' });
    await a.map('patient', 'pat_9', taken).expect(200);

    const res = await importAs(
      a,
      'operator',
      csv(
        `doctor,doc_1,${doctor}`, // 2: good
        'clinic,c_1,x', // 3
        'doctor,,practitioner-1', // 4
        `doctor,${'d'.repeat(201)},${doctor}`, // 5
        `doctor,"doc\u00012",${doctor}`, // 6
        'location,loc_1,location-nobody', // 7
        `patient,pat_1,${chart}`, // 8: good
        `patient,pat_2,${chart}`, // 9: the chart line 8 gave pat_1
        `patient,pat_3,${taken}`, // 10: the chart pat_9 has
        `location,loc_1,${location}`, // 11: good
        'doctor,doc_2,', // 12
        'doctor,doc_3', // 13
      ),
    ).expect(200);

    expect(res.body.imported).toBe(3);
    expect(res.body.refused).toEqual([
      { line: 3, reason: expect.stringMatching(/unknown entity type "clinic"/) },
      { line: 4, reason: 'serviceId is empty' },
      { line: 5, reason: 'serviceId is longer than 200 characters' },
      { line: 6, reason: 'serviceId holds a control character' },
      { line: 7, reason: expect.stringMatching(/EMR has no .*location-nobody/) },
      { line: 9, reason: expect.stringMatching(/one person, one chart/) },
      { line: 10, reason: expect.stringMatching(/pat_9: one person, one chart/) },
      { line: 12, reason: 'emrId is empty' },
      { line: 13, reason: expect.stringMatching(/expected 3 fields/) },
    ]);
    expect((await mapped(a)).sort()).toEqual([`doctor:doc_1=${doctor}`, `location:loc_1=${location}`, `patient:pat_1=${chart}`, `patient:pat_9=${taken}`]);
    const entries = await a.entries();
    expect(entries.filter((e) => e.action === 'crosswalk.import')).toEqual([expect.objectContaining({ actor: 'integration', outcome: 'ok' })]);
    expect(entries.filter((e) => e.action === 'crosswalk.map' && e.outcome === 'ok' && e.door === 'api').map((e) => e.targets[0])).toEqual([
      'patient:pat_9',
      'doctor:doc_1',
      'patient:pat_1',
      'location:loc_1',
    ]);
  });

  it('posts each mapping to the service once, and an import of the same file again posts nothing new', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const file = csv(`doctor,doc_1,${doctor}`, `location,loc_1,${location}`);

    await importAs(a, 'operator', file).expect(200);
    await a.f.processor.runOnce();
    expect((await importAs(a, 'operator', file).expect(200)).body).toEqual({ imported: 2, refused: [] });
    await a.f.processor.runOnce();

    expect(a.f.mappingsPut).toEqual([
      { entityType: 'doctor', serviceId: 'doc_1', externalId: doctor },
      { entityType: 'location', serviceId: 'loc_1', externalId: location },
    ]);
  });

  it('takes up the events waiting for the records it maps', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const eventId = a.f.store(appointmentEvent());
    await a.f.processor.runOnce();
    expect(a.f.state(eventId)?.state).toBe('waiting');

    await importAs(a, 'operator', csv(`doctor,doc_1,${doctor}`, `location,loc_1,${location}`)).expect(200);
    await a.f.processor.runOnce();

    expect(a.f.state(eventId)?.state).toBe('applied');
    expect(a.f.emr.appointments()).toEqual([expect.objectContaining({ practitionerId: doctor, locationId: location })]);
  });

  it(`refuses a file over ${CSV_MAX_BYTES} bytes whole (413), importing nothing`, async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const lines = Array.from({ length: Math.ceil(CSV_MAX_BYTES / 30) + 10 }, (_, i) => `doctor,doc_${String(i).padStart(8, '0')},${doctor}`);
    const file = csv(...lines);
    expect(Buffer.byteLength(file)).toBeGreaterThan(CSV_MAX_BYTES);

    const res = await importAs(a, 'operator', file).expect(413);

    expect(res.body.error).toMatchObject({ code: 'file_too_large', message: expect.stringContaining('nothing was imported') });
    expect(await a.crosswalk.list({ limit: 10 })).toEqual([]);
  });

  it(`refuses a file of more than ${CSV_MAX_LINES} lines whole (413), importing nothing`, async () => {
    const a = crosswalkAdmin();
    const file = csv(...Array.from({ length: CSV_MAX_LINES + 1 }, (_, i) => `doctor,d${i},p`));
    expect(Buffer.byteLength(file)).toBeLessThan(CSV_MAX_BYTES);

    expect((await importAs(a, 'operator', file).expect(413)).body.error.code).toBe('file_too_large');
    expect(await a.crosswalk.list({ limit: 10 })).toEqual([]);
  });

  it('refuses a file without the header (400), and a body that is not CSV (415)', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });

    expect((await importAs(a, 'operator', `doctor,doc_1,${doctor}\n`).expect(400)).body.error.code).toBe('invalid_csv');
    await a.send('operator', 'post', '/crosswalk/import').send({ entityType: 'doctor', serviceId: 'doc_1', emrId: doctor }).expect(415);

    expect(await a.crosswalk.list({ limit: 10 })).toEqual([]);
  });

  it('is refused to a viewer (403), importing nothing', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });

    await importAs(a, 'viewer', csv(`doctor,doc_1,${doctor}`)).expect(403);

    expect(await a.crosswalk.list({ limit: 10 })).toEqual([]);
    expect((await a.entries()).at(-1)).toMatchObject({ actor: 'night-desk', action: 'crosswalk.import', outcome: 'denied' });
  });
});

describe('GET /admin/crosswalk/export', () => {
  it('gives a viewer every mapping, whatever set it, as a CSV the import reads back', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const quoted = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Quoted' });
    await a.map('doctor', 'doc_1', doctor).expect(200);
    await importAs(a, 'operator', csv(`doctor,"doc,2",${quoted}`)).expect(200);
    // The service's snapshot names the location's EMR id: kept in the crosswalk with source `service`.
    const event = appointmentEvent({ serviceId: 'apt_1' });
    event.location = { ...(event.location as object), externalId: location };
    a.f.store(event);
    await a.f.processor.runOnce();
    a.f.emr.addEmrPatient({ name: 'not exported' });

    const res = await a.send('viewer', 'get', '/crosswalk/export').expect(200);

    expect(res.type).toBe('text/csv');
    // In (entityType, serviceId) order: `doc,2` sorts before `doc_1`.
    expect(res.text).toBe(csv(`doctor,"doc,2",${quoted}`, `doctor,doc_1,${doctor}`, `location,loc_1,${location}`));
    expect((await a.crosswalk.get({ entityType: 'location', serviceId: 'loc_1' }))?.source).toBe('service');

    const other = crosswalkAdmin();
    for (const [type, name] of [
      ['doctor', 'Dr Test Doctor'],
      ['location', 'Test Clinic Room 1'],
      ['doctor', 'Dr Quoted'],
    ] as const)
      other.f.emr.addMasterRecord({ entityType: type, name });
    expect((await importAs(other, 'operator', res.text).expect(200)).body).toEqual({ imported: 3, refused: [] });
    expect((await mapped(other)).sort()).toEqual((await mapped(a)).sort());
  });
});
