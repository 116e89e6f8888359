// The crosswalk's admin API over HTTP (docs/crosswalk.md): the records events lack listed with their waiting
// counts, a page at a time; one mapped (checked against the EMR first) or unmapped by an operator and never by a
// viewer; the EMR's suggestions by the name the service gave (a patient's from the newest waiting event, never
// kept); bad paths and bodies refused by name; every change audited once, with who and from where.
import { describe, expect, it } from 'vitest';
import { SOURCE_HEADER } from '../../src/app/admin-auth.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { type CrosswalkAdmin, crosswalkAdmin } from '../support/crosswalk-admin.ts';

/** Two appointments waiting: apt_1 with doc_1, apt_2 with doc_2, both at loc_1; nothing mapped. */
async function twoWaiting(): Promise<CrosswalkAdmin> {
  const a = crosswalkAdmin();
  a.f.store(appointmentEvent({ serviceId: 'apt_1' }));
  const second = appointmentEvent({ serviceId: 'apt_2' });
  second.doctor = { ...(second.doctor as object), serviceId: 'doc_2', name: 'Dr Second' };
  a.f.store(second);
  await a.f.processor.runOnce();
  return a;
}

const keys = (res: { body: { items: { entityType: string; serviceId: string }[] } }) => res.body.items.map((i) => `${i.entityType}:${i.serviceId}`);

describe('GET /admin/crosswalk', () => {
  it('lists, to a viewer, each record events lack with how many wait for it, a page at a time', async () => {
    const a = await twoWaiting();

    const all = await a.send('viewer', 'get', '/crosswalk').expect(200);
    expect(all.body).toEqual({
      items: [
        {
          entityType: 'doctor',
          serviceId: 'doc_1',
          name: 'Dr Test Doctor',
          emrId: null,
          waitingEvents: 1,
          source: null,
          updatedAt: new Date(a.f.clock.now()).toISOString(),
        },
        expect.objectContaining({ entityType: 'doctor', serviceId: 'doc_2', name: 'Dr Second', waitingEvents: 1 }),
        expect.objectContaining({ entityType: 'location', serviceId: 'loc_1', name: 'Test Clinic Room 1', waitingEvents: 2 }),
      ],
      nextCursor: null,
    });

    const first = await a.send('viewer', 'get', '/crosswalk?limit=2').expect(200);
    expect(keys(first)).toEqual(['doctor:doc_1', 'doctor:doc_2']);
    const rest = await a.send('viewer', 'get', `/crosswalk?limit=2&cursor=${first.body.nextCursor}`).expect(200);
    expect([keys(rest), rest.body.nextCursor]).toEqual([['location:loc_1'], null]);
  });

  it('filters by entity type and by state', async () => {
    const a = await twoWaiting();
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    await a.map('location', 'loc_1', location).expect(200);

    expect(keys(await a.send('viewer', 'get', '/crosswalk?entityType=location').expect(200))).toEqual(['location:loc_1']);
    expect(keys(await a.send('viewer', 'get', '/crosswalk?state=mapped').expect(200))).toEqual(['location:loc_1']);
    expect(keys(await a.send('viewer', 'get', '/crosswalk?state=unmapped').expect(200))).toEqual(['doctor:doc_1', 'doctor:doc_2']);
  });

  it('refuses a bad parameter by name', async () => {
    const a = crosswalkAdmin();
    expect((await a.send('viewer', 'get', '/crosswalk?state=lost').expect(400)).body.error).toMatchObject({ field: 'state' });
    expect((await a.send('viewer', 'get', '/crosswalk?entityType=appointment').expect(400)).body.error).toMatchObject({ field: 'entityType' });
    expect((await a.send('viewer', 'get', '/crosswalk?cursor=not-one').expect(400)).body.error).toMatchObject({ field: 'cursor' });
    expect((await a.send('viewer', 'get', '/crosswalk?type=x').expect(400)).body.error).toMatchObject({ field: 'type' });
  });
});

describe('PUT /admin/crosswalk/{entityType}/{serviceId}', () => {
  it('maps a doctor the EMR has for an operator, answers the item, and audits it once with who and from where', async () => {
    const a = await twoWaiting();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });

    const res = await a.map('doctor', 'doc_1', doctor).expect(200);

    expect(res.body).toEqual({
      entityType: 'doctor',
      serviceId: 'doc_1',
      name: 'Dr Test Doctor',
      emrId: doctor,
      waitingEvents: 0,
      source: 'operator',
      updatedAt: new Date(a.f.clock.now()).toISOString(),
    });
    expect((await a.entries()).filter((e) => e.action.startsWith('crosswalk.'))).toEqual([
      expect.objectContaining({ actor: 'integration', door: 'api', from: '127.0.0.1', action: 'crosswalk.map', targets: ['doctor:doc_1'], outcome: 'ok' }),
    ]);
  });

  it("records the CLI's door when the CLI asks", async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    await a.send('admin', 'put', '/crosswalk/doctor/doc_1').set(SOURCE_HEADER, 'cli').send({ emrId: doctor }).expect(200);
    expect((await a.entries()).at(-1)).toMatchObject({ actor: 'admin', door: 'cli', action: 'crosswalk.map', outcome: 'ok' });
  });

  it('is refused to a viewer (403), changing nothing, and audited as denied', async () => {
    const a = await twoWaiting();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });

    await a.send('viewer', 'put', '/crosswalk/doctor/doc_1').send({ emrId: doctor }).expect(403);

    expect(await a.crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: null, waitingEvents: 1 });
    expect((await a.entries()).at(-1)).toMatchObject({ actor: 'night-desk', action: 'crosswalk.map', targets: ['doctor:doc_1'], outcome: 'denied' });
  });

  it('answers 422 for an EMR record that does not exist, changing nothing, audited once as refused', async () => {
    const a = await twoWaiting();

    const res = await a.map('doctor', 'doc_1', 'practitioner-nobody').expect(422);

    expect(res.body).toEqual({ error: { code: 'emr_record_not_found', message: expect.stringContaining('practitioner-nobody') } });
    expect(await a.crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: null, waitingEvents: 1 });
    expect((await a.entries()).filter((e) => e.action === 'crosswalk.map')).toEqual([expect.objectContaining({ outcome: 'refused' })]);
  });

  it('answers 422 for a patient chart another service patient has: one person, one chart', async () => {
    const a = crosswalkAdmin();
    const chart = a.f.emr.addEmrPatient({ name: 'Test Patient One', phone: '+15550000001' });
    await a.map('patient', 'pat_1', chart).expect(200);

    const res = await a.map('patient', 'pat_2', chart).expect(422);

    expect(res.body.error.code).toBe('patient_chart_taken');
    expect(await a.crosswalk.get({ entityType: 'patient', serviceId: 'pat_2' })).toBeUndefined();
  });

  it.each([
    ['an unknown entity type', '/crosswalk/appointment/apt_1', { emrId: 'x' }, 'entityType'],
    ['a service id with a control character', '/crosswalk/doctor/doc%011', { emrId: 'x' }, 'serviceId'],
    ['a service id too long', `/crosswalk/doctor/${'d'.repeat(201)}`, { emrId: 'x' }, 'serviceId'],
    ['an empty EMR id', '/crosswalk/doctor/doc_1', { emrId: '' }, 'emrId'],
    ['an EMR id with a control character', '/crosswalk/doctor/doc_1', { emrId: 'practitioner\u00071' }, 'emrId'],
    ['an EMR id too long', '/crosswalk/doctor/doc_1', { emrId: 'p'.repeat(201) }, 'emrId'],
    ['no EMR id', '/crosswalk/doctor/doc_1', {}, 'emrId'],
  ])('refuses %s with 400 naming it', async (_what, path, body, field) => {
    const a = crosswalkAdmin();
    const res = await a.send('operator', 'put', path).send(body).expect(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
    expect(await a.crosswalk.list({ limit: 10 })).toEqual([]);
  });
});

describe('DELETE /admin/crosswalk/{entityType}/{serviceId}', () => {
  it('removes a mapping for an operator (204): the next event naming the record waits for one again', async () => {
    const a = crosswalkAdmin();
    const location = a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    await a.map('location', 'loc_1', location).expect(200);
    await a.map('doctor', 'doc_1', doctor).expect(200);

    await a.send('operator', 'delete', '/crosswalk/doctor/doc_1').expect(204);
    const later = a.f.store(appointmentEvent({ serviceId: 'apt_9' }));
    await a.f.processor.runOnce();

    expect(a.f.state(later)?.state).toBe('waiting');
    expect(keys(await a.send('viewer', 'get', '/crosswalk?state=unmapped').expect(200))).toEqual(['doctor:doc_1']);
    expect((await a.entries()).filter((e) => e.action === 'crosswalk.unmap')).toEqual([
      expect.objectContaining({ actor: 'integration', door: 'api', targets: ['doctor:doc_1'], outcome: 'ok' }),
    ]);
  });

  it('answers 404 when the record has no mapping, and 403 to a viewer', async () => {
    const a = crosswalkAdmin();
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    await a.map('doctor', 'doc_1', doctor).expect(200);

    await a.send('viewer', 'delete', '/crosswalk/doctor/doc_1').expect(403);
    await a.send('operator', 'delete', '/crosswalk/doctor/doc_2').expect(404);

    expect(await a.crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: doctor });
    expect((await a.entries()).filter((e) => e.action === 'crosswalk.unmap').map((e) => e.outcome)).toEqual(['denied', 'not_found']);
  });
});

describe('GET /admin/crosswalk/{entityType}/{serviceId}/suggestions', () => {
  it("gives a viewer the EMR's doctors that match the name the service gave", async () => {
    const a = await twoWaiting();
    const match = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Someone Else' });
    a.f.emr.addMasterRecord({ entityType: 'location', name: 'Dr Test Doctor' });

    const res = await a.send('viewer', 'get', '/crosswalk/doctor/doc_1/suggestions').expect(200);

    expect(res.body).toEqual({ items: [{ emrId: match, display: 'Dr Test Doctor' }] });
  });

  it('finds a patient by the newest waiting event’s name, which is neither kept nor logged', async () => {
    const a = crosswalkAdmin();
    a.f.emr.creatable.delete('patient');
    const chart = a.f.emr.addEmrPatient({ name: 'Test Patient One', phone: '+15550000001' });
    a.f.emr.addEmrPatient({ name: 'Someone Else', phone: '+15550000002' });
    const event = appointmentEvent({ serviceId: 'apt_1' });
    event.patient = { ...(event.patient as object), serviceId: 'pat_1' };
    a.f.store(event);
    await a.f.processor.runOnce();

    const res = await a.send('viewer', 'get', '/crosswalk/patient/pat_1/suggestions').expect(200);

    expect(res.body).toEqual({ items: [{ emrId: chart, display: 'Test Patient One' }] });
    expect(await a.crosswalk.get({ entityType: 'patient', serviceId: 'pat_1' })).toMatchObject({ name: null, waitingEvents: 1 });
    expect(JSON.stringify(a.f.logLines())).not.toContain('Test Patient One');
    expect(JSON.stringify(a.f.db.prepare('SELECT * FROM crosswalk').all())).not.toContain('Test Patient One');
  });

  it('is empty for a patient no event waits for: there is no name to search by', async () => {
    const a = crosswalkAdmin();
    a.f.emr.addEmrPatient({ name: 'Test Patient One', phone: '+15550000001' });
    expect((await a.send('viewer', 'get', '/crosswalk/patient/pat_1/suggestions').expect(200)).body).toEqual({ items: [] });
  });
});
