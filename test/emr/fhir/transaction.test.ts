// The FHIR EmrPort's claimAppointment (src/emr/fhir/transaction.ts) against the real bundled FHIR server over
// loopback, every request counted on the way: an appointment and the records it names in one HTTP call (a
// transaction Bundle posted to the base), the same ids found again, a participant the caller knows named by its
// id, an unknown status logged as ensureAppointment logs it, and nothing asked of a server without transactions;
// against a stand-in server, how the answer is read (spec status texts, versioned locations) and how failures
// are classed.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Appointment, Bundle, Patient } from '@medplum/fhirtypes';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { EmrError } from '../../../src/emr/errors.ts';
import { CLAIMED_TYPES } from '../../../src/emr/fhir/capabilities.ts';
import type { FhirEmr } from '../../../src/emr/fhir/index.ts';
import { RECORD_ORIGIN } from '../../../src/emr/fhir/mapping.ts';
import type { AppointmentClaim } from '../../../src/emr/port.ts';
import { startFhirServer, type RunningFhirServer } from '../../../src/fhir-server/server.ts';
import type { Logger } from '../../../src/logger.ts';
import { silentLogger } from '../../../src/logger.ts';
import { captureLogger } from '../../support/log-capture.ts';
import { plainFhirEmr } from '../../../bench/support/fhir-emr.ts';

const SYSTEM = 'urn:emr-bridge:service';

interface Seen {
  method: string;
  path: string;
  body: unknown;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const closing = (server: Server) =>
  new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });

/** A proxy on loopback in front of `upstream` that notes every request it passes on. */
async function recordingProxy(upstream: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      seen.push({ method: req.method ?? 'GET', path: req.url ?? '/', body: text ? JSON.parse(text) : undefined });
      const headers: Record<string, string> = {};
      for (const h of ['accept', 'content-type', 'if-none-exist', 'authorization']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
      const answer = await fetch(new URL(req.url ?? '/', upstream), { method: req.method ?? 'GET', headers, ...(text ? { body: text } : {}) });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/fhir+json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  return { url: await listen(server), seen, close: () => closing(server) };
}

const emrAt = (baseUrl: string, logger: Logger = silentLogger()): FhirEmr =>
  plainFhirEmr(baseUrl, { identifierSystem: SYSTEM, timeoutMs: 5_000, clock: createManualClock(), logger });

let seq = 0;
function newClaim(status = 'Approved'): AppointmentClaim {
  const n = ++seq;
  return {
    patient: { serviceId: `pat_t${n}`, name: `Patient ${n}`, phone: `+1555000${String(n).padStart(4, '0')}` },
    practitioner: { serviceId: `doc_t${n}`, name: `Dr ${n}` },
    location: { serviceId: `loc_t${n}`, name: `Room ${n}` },
    appointment: {
      serviceId: `apt_t${n}`,
      status,
      startsAt: '2026-02-01T09:00:00.000Z',
      mode: 'Offline',
      token: `A-${n}`,
      notes: '',
      payment: { type: 'Full', amountPaid: 15, balanceDue: 0, currency: 'EUR', payAtClinic: false },
      occurredAt: '2026-01-15T10:00:00.000Z',
    },
  };
}

describe('claimAppointment on the bundled FHIR server', () => {
  let fhir: RunningFhirServer;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let emr: FhirEmr;
  const log = captureLogger('warn');

  beforeAll(async () => {
    fhir = await startFhirServer({ logger: silentLogger() });
    proxy = await recordingProxy(fhir.baseUrl);
    emr = emrAt(proxy.url, log.logger);
    // What the server can do is read once (GET /metadata), before the claims counted below.
    await emr.ping();
  });
  afterAll(async () => {
    await emr.close();
    await proxy.close();
    await fhir.close();
  });

  /** The requests `fn` makes, and what it returns. */
  async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; requests: Seen[] }> {
    const from = proxy.seen.length;
    const result = await fn();
    return { result, requests: proxy.seen.slice(from) };
  }
  const read = async <T>(path: string) => (await (await fetch(`${fhir.baseUrl}/${path}`)).json()) as T;
  const count = async (type: string, serviceId: string) =>
    ((await read<Bundle>(`${type}?identifier=${encodeURIComponent(`${SYSTEM}|${serviceId}`)}`)).entry ?? []).length;

  it('claims a new appointment with its patient, practitioner and location in one HTTP call: a transaction Bundle posted to the base', async () => {
    const claim = newClaim();
    const { result, requests } = await counted(() => emr.claimAppointment!(claim));
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /']);
    const bundle = requests[0]!.body as Bundle;
    expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'transaction' });
    const serviceIdOf = (p: object) => (p as { serviceId: string }).serviceId;
    expect(bundle.entry!.map((e) => [e.request!.method, e.request!.url, e.request!.ifNoneExist])).toEqual([
      ['POST', 'Patient', `identifier=${SYSTEM}|${serviceIdOf(claim.patient)}`],
      ['POST', 'Practitioner', `identifier=${SYSTEM}|${serviceIdOf(claim.practitioner)}`],
      ['POST', 'Location', `identifier=${SYSTEM}|${serviceIdOf(claim.location)}`],
      ['POST', 'Appointment', `identifier=${SYSTEM}|${claim.appointment.serviceId}`],
    ]);
    expect(bundle.entry!.every((e) => /^urn:uuid:[0-9a-f-]{36}$/.test(e.fullUrl!))).toBe(true);

    expect(Object.values(result!).map((r) => r.created)).toEqual([true, true, true, true]);
    const appointment = await read<Appointment>(`Appointment/${result!.appointment.id}`);
    expect(appointment.participant.map((p) => p.actor?.reference)).toEqual([
      `Patient/${result!.patient.id}`,
      `Practitioner/${result!.practitioner.id}`,
      `Location/${result!.location.id}`,
    ]);
    // The records are those the one-by-one builders make: the patient marked as the adapter's.
    expect((await read<Patient>(`Patient/${result!.patient.id}`)).extension).toContainEqual(RECORD_ORIGIN);
  });

  it('finds the same records (created: false) in one call when the same claim comes again, making none twice', async () => {
    const claim = newClaim();
    const first = await emr.claimAppointment!(claim);
    const { result, requests } = await counted(() => emr.claimAppointment!(claim));
    expect(requests).toHaveLength(1);
    expect(result).toEqual({
      patient: { id: first!.patient.id, created: false },
      practitioner: { id: first!.practitioner.id, created: false },
      location: { id: first!.location.id, created: false },
      appointment: { id: first!.appointment.id, created: false },
    });
    expect(await count('Patient', (claim.patient as { serviceId: string }).serviceId)).toBe(1);
    expect(await count('Appointment', claim.appointment.serviceId)).toBe(1);
    // The one-by-one path finds them too.
    expect(await emr.ensureLocation(claim.location as { serviceId: string; name: string })).toEqual({ id: first!.location.id, created: false });
  });

  it('names a participant the caller knows by its id (Patient/<id>) and claims only the others', async () => {
    const known = await emr.ensurePatient({ serviceId: 'pat_known', name: 'Known Patient', phone: '+15550009999' });
    const claim = { ...newClaim(), patient: { id: known.id } };
    const { result, requests } = await counted(() => emr.claimAppointment!(claim));
    expect((requests[0]!.body as Bundle).entry!.map((e) => e.request!.url)).toEqual(['Practitioner', 'Location', 'Appointment']);
    expect(result!.patient).toEqual({ id: known.id, created: false });
    const appointment = await read<Appointment>(`Appointment/${result!.appointment.id}`);
    expect(appointment.participant[0]!.actor?.reference).toBe(`Patient/${known.id}`);
    expect(await count('Patient', 'pat_known')).toBe(1);
  });

  it('logs an unknown appointment status as ensureAppointment does, and keeps it', async () => {
    const claim = newClaim('Tentative');
    const result = await emr.claimAppointment!(claim);
    expect(log.lines()).toContainEqual(expect.objectContaining({ serviceId: claim.appointment.serviceId, status: 'Tentative' }));
    const appointment = await read<Appointment>(`Appointment/${result!.appointment.id}`);
    expect(appointment.status).toBe('proposed');
  });

  it('answers undefined where the server declares no transactions, asking it nothing: the caller claims one by one', async () => {
    const plain = await startFhirServer({ logger: silentLogger(), transactions: false });
    const plainProxy = await recordingProxy(plain.baseUrl);
    const plainEmr = emrAt(plainProxy.url);
    try {
      await plainEmr.ping();
      const from = plainProxy.seen.length;
      expect(await plainEmr.claimAppointment!(newClaim())).toBeUndefined();
      expect(plainProxy.seen.slice(from)).toEqual([]);
    } finally {
      await plainEmr.close();
      await plainProxy.close();
      await plain.close();
    }
  });
});

describe('claimAppointment reading what a server answers', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await closing(s);
  });

  /** A server declaring transactions and conditional create, answering a Bundle posted to the base with `answer`. */
  async function stub(answer: (sent: Bundle) => { status: number; body: unknown }): Promise<FhirEmr> {
    const statement = {
      resourceType: 'CapabilityStatement',
      fhirVersion: '4.0.1',
      rest: [{ mode: 'server', interaction: [{ code: 'transaction' }], resource: CLAIMED_TYPES.map((type) => ({ type, conditionalCreate: true })) }],
    };
    const server = createServer((req, res) => {
      void readBody(req).then((text) => {
        const { status, body } = req.url?.startsWith('/metadata') ? { status: 200, body: statement } : answer(JSON.parse(text) as Bundle);
        res.writeHead(status, { 'content-type': 'application/fhir+json' });
        res.end(JSON.stringify(body));
      });
    });
    servers.push(server);
    return emrAt(await listen(server));
  }

  /** An entry's `id` is an Appointment's, the one type this stand-in answers a resource for. */
  const response = (entries: { status: string; location?: string; id?: string }[]) => ({
    resourceType: 'Bundle',
    type: 'transaction-response',
    entry: entries.map((e) => ({
      response: { status: e.status, ...(e.location ? { location: e.location } : {}) },
      ...(e.id ? { resource: { resourceType: 'Appointment', id: e.id } } : {}),
    })),
  });

  it("reads the spec's status texts and versioned, absolute locations; an entry without a location by its resource's id", async () => {
    const emr = await stub(() => ({
      status: 200,
      body: response([
        { status: '201 Created', location: 'https://emr.example/fhir/Patient/12/_history/1' },
        { status: '200 OK', location: 'Practitioner/7/_history/3' },
        { status: '200', location: 'Location/9' },
        { status: '201', id: 'a-1' },
      ]),
    }));
    expect(await emr.claimAppointment!(newClaim())).toEqual({
      patient: { id: '12', created: true },
      practitioner: { id: '7', created: false },
      location: { id: '9', created: false },
      appointment: { id: 'a-1', created: true },
    });
    await emr.close();
  });

  it('fails as a call would: an entry refused is emr_rejected, the Bundle refused for an outage emr_unavailable, an answer missing entries emr_unavailable', async () => {
    const oneRefused = response([
      { status: '201', location: 'Patient/1' },
      { status: '412 Precondition Failed' },
      { status: '201', location: 'Location/1' },
      { status: '201', location: 'Appointment/1' },
    ]);
    const cases: [() => { status: number; body: unknown }, string][] = [
      [() => ({ status: 200, body: oneRefused }), 'emr_rejected'],
      [() => ({ status: 503, body: { resourceType: 'OperationOutcome' } }), 'emr_unavailable'],
      [() => ({ status: 200, body: response([{ status: '201', location: 'Patient/1' }]) }), 'emr_unavailable'],
      [() => ({ status: 400, body: { resourceType: 'OperationOutcome' } }), 'emr_rejected'],
    ];
    for (const [answer, code] of cases) {
      const emr = await stub(answer);
      const err = await emr.claimAppointment!(newClaim()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmrError);
      expect((err as EmrError).code).toBe(code);
      await emr.close();
    }
  });
});
