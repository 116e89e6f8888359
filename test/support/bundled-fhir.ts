// The bundled FHIR server from its HTTP side, for its own tests: servers started in a test file and closed
// together, a Bundle posted to the base, how many records a search finds, and the transaction the adapter sends
// for an appointment (conditional creates naming each other by urn:uuid).
import { startFhirServer, type FhirServerOptions, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';

/** A transaction-response or batch-response Bundle, or the OperationOutcome of a refused one. */
export interface AnsweredBundle {
  resourceType: string;
  type: string;
  entry: { response: { status: string; location: string }; resource?: { id: string } }[];
  issue?: { code: string; details?: { text?: string } }[];
}

export type ServerSwitches = Pick<FhirServerOptions, 'transactions' | 'conditionalCreate'>;

/** Servers for one test file: `closeAll` in its afterAll. */
export function bundledServers() {
  const servers: RunningFhirServer[] = [];
  return {
    async start(dataFile?: string, port = 0, opts: ServerSwitches = {}): Promise<RunningFhirServer> {
      const s = await startFhirServer({ port, logger: silentLogger(), ...(dataFile ? { dataFile } : {}), ...opts });
      servers.push(s);
      return s;
    },
    async closeAll(): Promise<void> {
      for (const s of servers) await s.close();
    },
  };
}

export async function postToBase(base: string, body: unknown): Promise<{ status: number; body: AnsweredBundle }> {
  const res = await fetch(`${base}/`, { method: 'POST', headers: { 'content-type': 'application/fhir+json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as AnsweredBundle };
}

/** How many records `GET <query>` finds. */
export const count = async (base: string, query: string): Promise<number> =>
  (((await (await fetch(`${base}/${query}`)).json()) as { entry?: unknown[] }).entry ?? []).length;

/** A transaction of two conditional creates: a patient, and an appointment naming it by its urn:uuid. */
export function appointmentTransaction(patientId: string, appointmentId: string) {
  const patientUrl = 'urn:uuid:0b1e7f5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      {
        fullUrl: patientUrl,
        resource: { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: patientId }], name: [{ text: 'Bundled Patient' }] },
        request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=urn:test|${patientId}` },
      },
      {
        fullUrl: 'urn:uuid:7c9d2e4f-3b5a-4d6c-9e8f-1a2b3c4d5e6f',
        resource: {
          resourceType: 'Appointment',
          status: 'booked',
          identifier: [{ system: 'urn:test', value: appointmentId }],
          participant: [{ actor: { reference: patientUrl }, status: 'accepted' }],
        },
        request: { method: 'POST', url: 'Appointment', ifNoneExist: `identifier=urn:test|${appointmentId}` },
      },
    ],
  };
}
