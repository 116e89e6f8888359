// The FHIR R4 adapter (src/emr/fhir) against the EmrPort conformance suite, on the bundled FHIR server with
// SMART sign-in on, as at a hospital: the adapter signs in with its registered key; the harness arranges
// and reads the EMR as the hospital's staff (a client of its own); an outage is the server stopped (and
// started again on the same address and data), a refusal the adapter's client registration revoked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bundle, Communication, DocumentReference, Patient, Resource } from '@medplum/fhirtypes';
import { systemClock } from '../../src/clock.ts';
import { loadFhirAuthSettings, type FhirAuthSettings } from '../../src/emr/fhir/auth/index.ts';
import { jwksOf } from '../../src/emr/fhir/auth/keys.ts';
import { createFhirEmr } from '../../src/emr/fhir/index.ts';
import { EXT } from '../../src/emr/fhir/mapping.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_CLIENT_ID, createFhirReader, registerAdapterClient } from '../support/fhir-client.ts';
import { describeEmrPort, type ClaimedKind, type EmrHarness } from './conformance/describe-emr-port.ts';

const SYSTEM = 'urn:emr-bridge:service';
const LOINC = 'http://loinc.org';
const TYPE_CODES = { lab_report: '11502-2', prescription: '57833-6' } as const;
const RESOURCE: Record<ClaimedKind, string> = { patient: 'Patient', practitioner: 'Practitioner', location: 'Location', appointment: 'Appointment' };

async function fhirHarness(): Promise<EmrHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-fhir-conformance-'));
  const dataFile = join(dir, 'fhir.jsonl');
  let server: RunningFhirServer = await startFhirServer({ logger: silentLogger(), auth: {}, dataFile });
  const key = await registerAdapterClient(server, dir);
  const baseUrl = server.baseUrl;
  const staff = await createFhirReader(baseUrl, () => server);
  const adapterAuth = await loadFhirAuthSettings({ mode: 'smart', clientId: ADAPTER_CLIENT_ID, privateKeyPath: join(dir, 'fhir-client-key.pem') });
  const port = (baseUrl: string, auth: FhirAuthSettings = adapterAuth) =>
    createFhirEmr({
      baseUrl,
      identifierSystem: SYSTEM,
      timeoutMs: 2_000,
      labReportTypeCodes: [`${LOINC}|${TYPE_CODES.lab_report}`],
      prescriptionTypeCodes: [`${LOINC}|${TYPE_CODES.prescription}`],
      auth,
      maxContentBytes: 1024 * 1024,
      clock: systemClock,
      logger: silentLogger(),
    });
  const emr = port(baseUrl);
  const read = async <T>(path: string): Promise<T | undefined> => {
    try {
      return (await staff.call<T>('GET', path)).body;
    } catch (err) {
      if (/answered 404/.test((err as Error).message)) return undefined;
      throw err;
    }
  };
  const search = async <T extends Resource = Resource>(query: string) => ((await staff.call<Bundle<T>>('GET', query)).body.entry ?? []).map((e) => e.resource!);

  return {
    emr,
    async addEmrPatient({ name, phone }) {
      const created = await staff.call<{ id: string }>('POST', 'Patient', {
        resourceType: 'Patient',
        identifier: [{ system: 'urn:hospital:mrn', value: `MRN-${Math.random().toString(36).slice(2, 10)}` }],
        name: [{ text: name }],
        birthDate: '1980-05-05',
        telecom: [{ system: 'phone', value: phone }],
      });
      return created.body.id;
    },
    async readPatient(id) {
      const p = await read<Patient>(`Patient/${encodeURIComponent(id)}`);
      if (!p) return undefined;
      const n = p.name?.[0];
      return {
        name: n?.text ?? [...(n?.given ?? []), n?.family].filter(Boolean).join(' '),
        phones: (p.telecom ?? []).filter((t) => t.system === 'phone').map((t) => t.value!),
        serviceIds: (p.identifier ?? []).filter((i) => i.system === SYSTEM).map((i) => i.value!),
      };
    },
    countByServiceId: async (kind, serviceId) => (await search(`${RESOURCE[kind]}?identifier=${encodeURIComponent(`${SYSTEM}|${serviceId}`)}`)).length,
    async readAppointment(id) {
      const a = await read<{ start: string; status: string; extension?: { url: string; valueString?: string }[] }>(`Appointment/${encodeURIComponent(id)}`);
      return (
        a && {
          startsAt: a.start,
          cancelled: a.status === 'cancelled',
          serviceStatus: a.extension?.find((e) => e.url === `${EXT}/service-status`)?.valueString ?? '',
        }
      );
    },
    async addDocument(seed) {
      const data = Buffer.from(seed.bytes).toString('base64');
      const attachment: Record<string, string> = { contentType: seed.mimeType, title: seed.filename };
      if (seed.content === 'inline') attachment.data = data;
      else
        attachment.url = `${baseUrl}/Binary/${(await staff.call<{ id: string }>('POST', 'Binary', { resourceType: 'Binary', contentType: seed.mimeType, data })).body.id}`;
      const doc: DocumentReference = {
        resourceType: 'DocumentReference',
        status: 'current',
        type: { coding: [{ system: LOINC, code: TYPE_CODES[seed.documentType] }] },
        subject: { reference: `Patient/${seed.patientId}` },
        description: seed.label,
        content: [{ attachment }],
      };
      return (await staff.call<{ id: string }>('POST', 'DocumentReference', doc)).body.id;
    },
    async readOutcomes(documentId) {
      const held = await search<Communication>(`Communication?identifier=${encodeURIComponent(`${SYSTEM}|document-outcome:${documentId}`)}`);
      return held.map((c) => ({ status: c.extension!.find((e) => e.url === `${EXT}/document-status`)!.valueCode as never, version: c.meta!.versionId! }));
    },
    async unreachable() {
      // The EMR goes down; it comes back on the same address with its data, the adapter's client registered again.
      await server.close();
      return {
        emr,
        async end() {
          server = await startFhirServer({ logger: silentLogger(), auth: {}, dataFile, port: Number(new URL(baseUrl).port) });
          await registerAdapterClient(server, dir);
        },
      };
    },
    async refusingAdapter() {
      // The hospital revoked the adapter's registration: its sign-in is refused from then on.
      const clientId = 'emr-bridge-revoked';
      server.auth!.registerClient({ clientId, jwks: jwksOf(key.publicJwk) });
      server.auth!.removeClient(clientId);
      const refused = port(baseUrl, { ...(adapterAuth as Extract<FhirAuthSettings, { mode: 'smart' }>), clientId });
      return { emr: refused, end: () => refused.close() };
    },
    async close() {
      await emr.close();
      await staff.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeEmrPort('the FHIR R4 adapter on the bundled FHIR server (SMART sign-in)', fhirHarness);
