// An operator's mapping racing the processor's create of the same patient, where the EMR lets the adapter create
// patients: both take the patient's entity lock, so whichever comes second sees the first. Either the person's
// chart stands and the processor names it (creating none), or the processor's new chart stands and the person's
// PUT is refused (422 mapped_by_adapter); never two charts for one service patient.
import { describe, expect, it } from 'vitest';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { crosswalkAdmin } from '../support/crosswalk-admin.ts';

const ROUNDS = 24;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an operator mapping a patient while the processor creates that patient', () => {
  it.each([
    { path: 'in one call with its appointment', transactions: true },
    { path: 'one by one (ensurePatient)', transactions: false },
  ])(`never leaves two charts for one service patient, created $path (${ROUNDS} rounds, each order met)`, async ({ transactions }) => {
    const a = crosswalkAdmin();
    const { f } = a;
    f.emr.transactions = transactions;
    const location = f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const doctor = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    await a.map('location', 'loc_1', location).expect(200);
    await a.map('doctor', 'doc_1', doctor).expect(200);
    // The EMR takes a moment to create: long enough for the person's PUT to land while it does.
    const claim = f.emr.claimAppointment.bind(f.emr);
    const ensurePatient = f.emr.ensurePatient.bind(f.emr);
    f.emr.claimAppointment = async (c) => {
      await sleep(3);
      return claim(c);
    };
    f.emr.ensurePatient = async (p) => {
      await sleep(3);
      return ensurePatient(p);
    };

    const outcomes: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const chart = f.emr.addEmrPatient({ name: `Test Patient ${i}`, phone: '+15550000001' });
      f.store(appointmentEvent({ serviceId: `apt_${i}` }));
      // Either side gets a head start of 0 to 5 ms, in turn.
      const [processorAfter, putAfter] = i % 2 ? [0, (i >> 1) % 6] : [(i >> 1) % 6, 0];
      const [, put] = await Promise.all([
        sleep(processorAfter).then(() => f.processor.runOnce()),
        sleep(putAfter).then(() => a.map('patient', `pat_apt_${i}`, chart)),
      ]);
      outcomes.push(put.status);

      const created = f.emr.records.patient.get(`pat_apt_${i}`);
      const crosswalked = (await a.crosswalk.get({ entityType: 'patient', serviceId: `pat_apt_${i}` }))?.emrId;
      const recorded = await f.stores.mappings.find('patient', `pat_apt_${i}`);
      const appointment = f.emr.appointments().find((x) => x.serviceId === `apt_${i}`);
      if (put.status === 200) {
        // The person's chart stands: the processor created none and named that one.
        expect([created?.id, crosswalked, recorded, appointment?.patientId]).toEqual([undefined, chart, chart, chart]);
      } else {
        expect([put.status, put.body.error.code]).toEqual([422, 'mapped_by_adapter']);
        expect(crosswalked).toBeUndefined();
        expect([recorded, appointment?.patientId]).toEqual([created?.id, created?.id]);
      }
    }
    // Both orders were met, so each side was seen to wait for the other.
    expect(new Set(outcomes)).toEqual(new Set([200, 422]));
  });
});
