// The bundled FHIR server's vendor profile over HTTP: its CapabilityStatement, each refusal answered as a FHIR
// server does (an OperationOutcome) and counted at GET /_control/counters, the writes it takes (a Patient created
// without If-None-Exist, JSON Patch, the document pusher's Communications), and the default profile untouched.
// Booking, Slots and If-Match have their own files beside this one.
import { afterEach, describe, expect, it } from 'vitest';
import { startFhirServer, type RunningFhirServer } from '../../../src/fhir-server/server.ts';
import { silentLogger } from '../../../src/logger.ts';

let server: RunningFhirServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(opts: { profile?: 'default' | 'vendor'; auth?: object } = {}): Promise<string> {
  server = await startFhirServer({ port: 0, logger: silentLogger(), profile: opts.profile ?? 'vendor', ...(opts.auth ? { auth: opts.auth } : {}) });
  return server.baseUrl;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { issue?: { code: string }[]; entry?: { resource: { id: string } }[]; id?: string };
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/${path}`, {
    method,
    headers: { 'content-type': 'application/fhir+json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

const counters = async (base: string) =>
  (await call(base, 'GET', '_control/counters')).body as {
    postPractitioner: number;
    postLocation: number;
    ifNoneExist: number;
    refused: Record<string, number>;
  };

const patient = { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: 'pat_1' }], name: [{ given: ['Maria'], family: 'Lopez' }] };
const practitioner = { resourceType: 'Practitioner', identifier: [{ system: 'urn:test', value: 'doc_1' }], name: [{ text: 'Dr New' }] };
const location = { resourceType: 'Location', identifier: [{ system: 'urn:test', value: 'loc_1' }], name: 'Room 99' };
const appointment = { resourceType: 'Appointment', status: 'booked', participant: [{ actor: { reference: 'Practitioner/pr-1001' }, status: 'accepted' }] };
const communication = { resourceType: 'Communication', status: 'completed', identifier: [{ system: 'urn:test', value: 'doc-outcome-1' }] };

interface Statement {
  rest: { interaction?: unknown[]; resource: { type: string; interaction: { code: string }[]; conditionalCreate?: boolean; conditionalUpdate?: boolean }[] }[];
}

describe('vendor profile: CapabilityStatement', () => {
  it('declares master data read and search only, Patient and Appointment create and patch without conditional create, and no transaction or batch', async () => {
    const base = await start();
    const rest = ((await call(base, 'GET', 'metadata')).body as unknown as Statement).rest[0]!;
    const interactions = Object.fromEntries(rest.resource.map((r) => [r.type, r.interaction.map((i) => i.code)]));
    expect(interactions).toEqual({
      Patient: ['read', 'search-type', 'create', 'patch'],
      Practitioner: ['read', 'search-type'],
      Location: ['read', 'search-type'],
      Appointment: ['read', 'search-type', 'create', 'patch'],
      Slot: ['read', 'search-type'],
      Schedule: ['read', 'search-type'],
      DocumentReference: ['read', 'search-type', 'create', 'update'],
      Binary: ['read', 'search-type', 'create', 'update'],
      Communication: ['read', 'search-type', 'create', 'update'],
    });
    expect(rest.resource.every((r) => r.conditionalCreate === false)).toBe(true);
    expect(rest.resource.find((r) => r.type === 'Patient')?.conditionalUpdate).toBe(false);
    expect(rest.interaction).toBeUndefined();
  });
});

// [what, method, path, body, headers, status, the refused counter's key]
const refusals: [string, string, string, unknown, Record<string, string>, number, string][] = [
  ['POST Practitioner', 'POST', 'Practitioner', practitioner, {}, 405, 'POST Practitioner'],
  ['POST Location', 'POST', 'Location', location, {}, 405, 'POST Location'],
  ['PUT Practitioner', 'PUT', 'Practitioner/pr-1001', { ...practitioner, id: 'pr-1001' }, {}, 405, 'PUT Practitioner'],
  ['PUT Location', 'PUT', 'Location/loc-2001', { ...location, id: 'loc-2001' }, {}, 405, 'PUT Location'],
  ['DELETE Practitioner', 'DELETE', 'Practitioner/pr-1001', undefined, {}, 405, 'DELETE Practitioner'],
  ['DELETE Location', 'DELETE', 'Location/loc-2001', undefined, {}, 405, 'DELETE Location'],
  ['PATCH Practitioner', 'PATCH', 'Practitioner/pr-1001', [{ op: 'replace', path: '/active', value: false }], {}, 405, 'PATCH Practitioner'],
  ['a Bundle posted to the base', 'POST', '', { resourceType: 'Bundle', type: 'transaction', entry: [] }, {}, 405, 'POST /'],
  ['PUT Schedule (read only)', 'PUT', 'Schedule/sch-3001', { resourceType: 'Schedule', id: 'sch-3001', actor: [] }, {}, 405, 'PUT Schedule'],
  ['a conditional update of Patient', 'PUT', 'Patient?identifier=urn:test|pat_1', patient, {}, 405, 'PUT Patient'],
  ['a conditional patch of Patient', 'PATCH', 'Patient?identifier=urn:test|pat_1', [{ op: 'add', path: '/active', value: true }], {}, 400, 'PATCH Patient'],
  ['an $operation', 'POST', 'Patient/$match', { resourceType: 'Parameters' }, {}, 405, 'POST Patient'],
  ['If-None-Exist on a Patient create', 'POST', 'Patient', patient, { 'if-none-exist': 'identifier=urn:test|pat_1' }, 400, 'POST Patient'],
  ['If-None-Exist on an Appointment create', 'POST', 'Appointment', appointment, { 'if-none-exist': 'identifier=urn:test|apt_1' }, 400, 'POST Appointment'],
  ['If-None-Exist on a Communication create', 'POST', 'Communication', communication, { 'if-none-exist': 'identifier=urn:test|c' }, 400, 'POST Communication'],
];

describe('vendor profile: refusals', () => {
  it.each(refusals)('refuses %s with an OperationOutcome and counts it', async (_what, method, path, body, headers, status, key) => {
    const base = await start();
    const answer = await call(base, method, path, body, headers);
    expect(answer.status).toBe(status);
    expect(answer.body.resourceType).toBe('OperationOutcome');
    expect(answer.body.issue?.[0]?.code).toBe('not-supported');
    if (status === 405) expect(answer.headers.get('allow')).toMatch(/^GET/);
    expect((await counters(base)).refused).toEqual({ [key]: 1 });
  });

  it('creates nothing it refuses: the master data stays as loaded and no patient is made by a conditional create', async () => {
    const base = await start();
    await call(base, 'POST', 'Practitioner', practitioner);
    await call(base, 'PUT', 'Location/loc-2001', { ...location, id: 'loc-2001' });
    await call(base, 'POST', 'Patient', patient, { 'if-none-exist': 'identifier=urn:test|pat_1' });
    expect((await call(base, 'GET', 'Practitioner')).body.entry).toHaveLength(4);
    expect((await call(base, 'GET', 'Location/loc-2001')).body.name).toBe('Room 1');
    expect((await call(base, 'GET', 'Patient')).body.entry ?? []).toHaveLength(0);
  });

  it('refuses PUT on Patient and Appointment, which declare patch and no update', async () => {
    const base = await start();
    const created = await call(base, 'POST', 'Patient', patient);
    const put = await call(base, 'PUT', `Patient/${created.body.id}`, { ...patient, id: created.body.id, active: false });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, PATCH');
    const [slot] = (await call(base, 'GET', 'Slot?schedule.actor=Practitioner/pr-1001&status=free&_count=1')).body.entry ?? [];
    const booking = {
      ...appointment,
      slot: [{ reference: `Slot/${slot?.resource.id}` }],
      participant: [{ actor: { reference: `Patient/${created.body.id}` }, status: 'accepted' }],
    };
    const booked = await call(base, 'POST', 'Appointment', booking);
    expect(booked.status).toBe(201);
    expect((await call(base, 'PUT', `Appointment/${booked.body.id}`, { ...booking, id: booked.body.id })).status).toBe(405);
    expect((await counters(base)).refused).toEqual({ 'PUT Patient': 1, 'PUT Appointment': 1 });
  });

  it('counts every POST Practitioner, POST Location and If-None-Exist it is asked, even one refused for sign-in first', async () => {
    const base = await start({ auth: {} });
    expect((await call(base, 'POST', 'Practitioner', practitioner)).status).toBe(401);
    expect((await call(base, 'POST', 'Location', location)).status).toBe(401);
    expect((await call(base, 'POST', 'Patient', patient, { 'if-none-exist': 'identifier=urn:test|pat_1' })).status).toBe(401);
    // Sign-in refusals are the guard's, not the profile's.
    expect(await counters(base)).toEqual({ postPractitioner: 1, postLocation: 1, ifNoneExist: 1, withoutIfMatch: 0, refused: {} });
  });
});

describe('vendor profile: what it takes', () => {
  it('creates a Patient without If-None-Exist (201, Location, ETag) and changes it by JSON Patch under If-Match', async () => {
    const base = await start();
    const created = await call(base, 'POST', 'Patient', patient);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/Patient/${created.body.id}`);
    const patched = await call(base, 'PATCH', `Patient/${created.body.id}`, [{ op: 'add', path: '/active', value: true }], {
      'content-type': 'application/json-patch+json',
      'if-match': created.headers.get('etag')!,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.active).toBe(true);
    expect(await counters(base)).toEqual({ postPractitioner: 0, postLocation: 0, ifNoneExist: 0, withoutIfMatch: 0, refused: {} });
  });

  it("takes the document pusher's writes: a Communication POSTed, found by identifier, then PUT by its id", async () => {
    const base = await start();
    const created = await call(base, 'POST', 'Communication', communication);
    expect(created.status).toBe(201);
    const found = await call(base, 'GET', 'Communication?identifier=urn:test|doc-outcome-1');
    expect(found.body.entry?.map((e) => e.resource.id)).toEqual([created.body.id]);
    const put = await call(base, 'PUT', `Communication/${created.body.id}`, { ...communication, id: created.body.id, status: 'stopped' });
    expect(put.status).toBe(200);
    expect(put.body.status).toBe('stopped');
  });
});

describe('default profile', () => {
  it('is unchanged: it creates practitioners, takes transactions and has no control route', async () => {
    const base = await start({ profile: 'default' });
    expect((await call(base, 'POST', 'Practitioner', practitioner)).status).toBe(201);
    const bundle = { resourceType: 'Bundle', type: 'transaction', entry: [{ resource: location, request: { method: 'POST', url: 'Location' } }] };
    expect((await call(base, 'POST', '', bundle)).status).toBe(200);
    expect((await call(base, 'GET', 'Practitioner')).body.entry).toHaveLength(1);
    expect((await call(base, 'GET', 'Location')).body.entry).toHaveLength(1);
    const control = await fetch(`${base}/_control/counters`);
    expect(control.status).not.toBe(200);
  });

  it('is unchanged: no Slots are made, an Appointment needs none and a change needs no If-Match', async () => {
    const base = await start({ profile: 'default' });
    expect((await call(base, 'GET', 'Slot')).body.entry ?? []).toHaveLength(0);
    const created = await call(base, 'POST', 'Appointment', appointment);
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBeNull();
    const put = await call(base, 'PUT', `Appointment/${created.body.id}`, { ...appointment, id: created.body.id, status: 'cancelled' });
    expect(put.status).toBe(200);
    expect((await fetch(`${base}/_control/staff-edit/Appointment/${created.body.id}`, { method: 'POST', body: '[]' })).status).not.toBe(200);
  });
});
