// End to end with the EMR refusing the adapter's sign-in (a removed client, a scope not granted): one
// incident with one alert when it starts and one when it ends, GET /admin/status naming the cause, no
// dead letter and no failed document, and everything applied once the hospital's IT fixes it.
import { afterEach, describe, expect, it } from 'vitest';
import { labReportDocument, emrPatient } from '../support/fhir-builders.ts';
import { registerAdapterClient } from '../support/fhir-client.ts';
import { captureLogger } from '../support/log-capture.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const SYSTEM = 'urn:emr-bridge:service';
const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };
let s: Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

type Component = { name: string; ok: boolean; reason: string | null; since: string };
const emrStatus = async (st: Stack) => (await st.admin<{ components: Component[] }>('GET', '/status')).body.components.find((c) => c.name === 'emr')!;

/** Work reaching the EMR from both sides: an appointment from the service, a lab report written in the EMR. */
async function workForTheEmr(st: Stack) {
  const appointment = (await st.simPost<{ serviceId: string }>('/_sim/appointments', { clinicId: st.clinicId })).body;
  const patient = await st.fhirCreate(emrPatient('+15550407777'));
  const document = await st.fhirCreate(labReportDocument(patient.id, 'Lipid panel'));
  return { appointment, document };
}

async function expectNothingParkedOrFailed(st: Stack) {
  expect((await st.admin<{ events: unknown[]; mappings: unknown[] }>('GET', '/dead-letters')).body).toMatchObject({ events: [], mappings: [] });
  const docs = (await st.admin<{ documents: { status: string }[] }>('GET', '/documents')).body.documents;
  expect(docs.filter((d) => d.status === 'FAILED' || d.status === 'REJECTED')).toEqual([]);
}

async function expectResumed(st: Stack, work: Awaited<ReturnType<typeof workForTheEmr>>) {
  await waitFor(
    async () => (await st.fhirSearch(`Appointment?identifier=${encodeURIComponent(`${SYSTEM}|${work.appointment.serviceId}`)}`)).length === 1,
    20_000,
  );
  await waitFor(
    async () => (await st.admin<{ document: { status: string } }>('GET', `/documents/${work.document.id}`)).body.document?.status === 'SENT',
    20_000,
  );
  await waitFor(
    async () =>
      (await st.fhirSearch<{ status: string }>(`Communication?identifier=${encodeURIComponent(`${SYSTEM}|document-outcome:${work.document.id}`)}`))[0]
        ?.status === 'completed',
    20_000,
  );
  expect((await emrStatus(st)).ok).toBe(true);
}

describe('an EMR that refuses the adapter', () => {
  it('a removed client is one incident: nothing parked or failed, and work resumes once the key is registered again', async () => {
    const log = captureLogger('info');
    s = await startStack({ clinic: NO_QUIET_HOURS, logger: log.logger });
    const stack = s;
    stack.fhirServer().auth!.removeClient('emr-bridge');
    const work = await workForTheEmr(stack);

    const failing = await waitFor(async () => ((await emrStatus(stack)).ok ? undefined : emrStatus(stack)));
    expect(failing.reason).toContain('emr_unauthorized');
    expect(failing.reason).toContain('invalid_client');
    // The webhook was acknowledged and waits; a few probes have come and gone.
    await waitFor(async () => (await stack.simGet<{ statusCode: number }[]>('/_sim/deliveries')).body.some((d) => d.statusCode === 200));
    await new Promise((r) => setTimeout(r, 1_500));
    await expectNothingParkedOrFailed(stack);

    await registerAdapterClient(stack.fhirServer(), stack.dir);
    await expectResumed(stack, work);
    await expectNothingParkedOrFailed(stack);
    const alerts = log.lines().filter((l) => l.alert === true);
    expect(alerts.map((l) => l.msg)).toEqual(['emr is failing', 'emr incident ended']);
    expect(JSON.stringify(alerts)).not.toContain('Synthetic');
  }, 60_000);

  it('a scope not granted is one incident too, and work resumes once it is granted', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS });
    const stack = s;
    // The hospital forgot Appointment and Communication: the token request for the adapter's scopes is refused.
    await registerAdapterClient(stack.fhirServer(), stack.dir, [
      'system/Patient.cruds',
      'system/Practitioner.cruds',
      'system/Location.cruds',
      'system/DocumentReference.rs',
      'system/Binary.r',
    ]);
    stack.fhirServer().auth!.revokeTokens();
    const work = await workForTheEmr(stack);
    const failing = await waitFor(async () => ((await emrStatus(stack)).ok ? undefined : emrStatus(stack)));
    expect(failing.reason).toContain('invalid_scope');
    await new Promise((r) => setTimeout(r, 1_500));
    await expectNothingParkedOrFailed(stack);

    await registerAdapterClient(stack.fhirServer(), stack.dir);
    await expectResumed(stack, work);
  }, 60_000);
});
