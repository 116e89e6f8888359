// End to end for which FHIR Patient a service patient is: a document for an EMR patient the service has
// not met names that Patient's id, so the service's patient.created finds it even when it is applied
// before the document's answer (one Patient, no alert), and a service snapshot never renames a Patient the
// EMR owns (the difference is logged without values).
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../support/log-capture.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { emrPatient, labReportDocument } from '../support/fhir-builders.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

let s: Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };
const SERVICE = 'urn:emr-bridge:service';
type FhirPatient = {
  id: string;
  birthDate?: string;
  name?: { text?: string; given?: string[]; family?: string }[];
  identifier?: { system: string; value: string }[];
};
const serviceIdOf = (p: FhirPatient | undefined) => p?.identifier?.find((i) => i.system === SERVICE)?.value;

describe('a patient the service first meets through a document', () => {
  it("is the EMR's own Patient when patient.created is applied before the document's answer arrives", async () => {
    const log = captureLogger('info');
    s = await startStack({ clinic: NO_QUIET_HOURS, settings: { SERVICE_TIMEOUT_MS: '10000' }, logger: log.logger });
    // The service does the work at once and answers 3 s later: its webhook overtakes its answer.
    await s.simPost('/_sim/faults', { integration: { delayMs: 3000 } });
    const mrn = { system: 'urn:hospital:mrn', value: 'MRN-000901' };
    const patient = await s.fhirCreate(
      emrPatient('+15550309001', { identifier: [mrn], birthDate: '1970-01-01', name: [{ given: ['Synthetic'], family: 'Patient' }] }),
    );
    const dr = await s.fhirCreate(labReportDocument(patient.id, 'HbA1c'));

    // The processor has taken the service's new patient onto the EMR's Patient while the send still waits.
    const answered = () => log.lines().some((l) => l.msg === 'document sent to the service' && l.externalId === dr.id);
    const adopted = await waitFor(async () => serviceIdOf((await s!.fhirSearch<FhirPatient>(`Patient?_id=${patient.id}`))[0]), 8_000, 25);
    expect(answered()).toBe(false);
    await s.simPost('/_sim/faults', {});

    await waitFor(() => answered() || undefined, 15_000);
    const outcome = await waitFor(
      async () => (await s!.fhirSearch<{ status: string }>(`Communication?identifier=${encodeURIComponent(`${SERVICE}|document-outcome:${dr.id}`)}`))[0],
    );
    expect(outcome.status).toBe('completed');
    const all = await s.fhirSearch<FhirPatient>('Patient?_count=50');
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: patient.id, birthDate: '1970-01-01', name: [{ given: ['Synthetic'], family: 'Patient' }] });
    expect(all[0]!.identifier).toEqual([mrn, { system: SERVICE, value: adopted }]);
    expect(log.lines().filter((l) => l.alert === true)).toEqual([]);
    // The service knows the patient by the EMR's id: its next appointment lands on that Patient.
    const a = await s.simPost<{ patient: { externalId: string | null } }>('/_sim/appointments', { clinicId: s.clinicId, patient: { serviceId: adopted } });
    expect(a.body.patient.externalId).toBe(patient.id);
    const appointment = await waitFor(async () => (await s!.fhirSearch<{ participant: { actor: { reference: string } }[] }>('Appointment?_count=50'))[0]);
    expect(appointment.participant.map((p) => p.actor.reference)).toContain(`Patient/${patient.id}`);
    expect(await s.fhirSearch('Patient?_count=50')).toHaveLength(1);
  }, 40_000);
});

describe('a Patient the EMR owns', () => {
  it("keeps its name when the service's snapshot spells it otherwise, and the difference is logged without values", async () => {
    const log = captureLogger('info');
    s = await startStack({ clinic: NO_QUIET_HOURS, logger: log.logger });
    const patient = await s.fhirCreate({
      resourceType: 'Patient',
      birthDate: '1981-02-03',
      name: [{ given: ['Clerk'], family: 'Spelling' }],
      telecom: [{ system: 'phone', value: '+15550309002' }],
    });
    // A document pushed through the admin API for that Patient by its EMR id, with another spelling.
    const pushed = await s.admin('POST', '/documents', {
      documentType: 'lab_report',
      externalId: `doc-own-${Date.now()}`,
      patientExternalId: patient.id,
      patientPhone: '+15550309002',
      patientName: 'Service Spelling',
      label: 'Lipid panel',
      file: { base64: PDF.toString('base64'), filename: 'lipids.pdf' },
    });
    expect(pushed.status).toBe(202);

    const linked = await waitFor(async () => {
      const found = (await s!.fhirSearch<FhirPatient>(`Patient?_id=${patient.id}`))[0];
      return serviceIdOf(found) ? found : undefined;
    }, 15_000);
    const difference = await waitFor(() => log.lines().find((l) => Array.isArray(l.fields)));
    expect(difference).toMatchObject({ patientServiceId: serviceIdOf(linked), fields: ['name'] });
    expect(JSON.stringify(difference)).not.toMatch(/Spelling|\+1555/);
    expect(linked).toMatchObject({ birthDate: '1981-02-03', name: [{ given: ['Clerk'], family: 'Spelling' }] });
    expect(await s.fhirSearch('Patient?_count=50')).toHaveLength(1);
  }, 30_000);
});
