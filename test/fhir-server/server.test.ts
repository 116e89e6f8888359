// The bundled FHIR R4 server: conditional create by identifier answers the same resource twice,
// identifier search finds it, and with a data file the data survives a restart. A transaction Bundle of
// conditional creates posted to the base makes each record once, its urn:uuid references rewritten to the ids
// made or found; with transactions off it is refused and not declared.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appointmentTransaction, bundledServers, count, postToBase } from '../support/bundled-fhir.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-fhir-'));
const { start, closeAll } = bundledServers();
afterAll(async () => {
  await closeAll();
  rmSync(dir, { recursive: true, force: true });
});

const patient = { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: 'pat_1' }], name: [{ text: 'Test Patient' }] };

async function conditionalCreate(base: string) {
  const res = await fetch(`${base}/Patient`, {
    method: 'POST',
    headers: { 'content-type': 'application/fhir+json', 'if-none-exist': 'identifier=urn:test|pat_1' },
    body: JSON.stringify(patient),
  });
  return { status: res.status, body: (await res.json()) as { id: string; meta: { versionId: string; lastUpdated: string } } };
}

describe('bundled FHIR server', () => {
  it('answers the same resource to a repeated conditional create, and finds it by identifier', async () => {
    const s = await start();
    const first = await conditionalCreate(s.baseUrl);
    const second = await conditionalCreate(s.baseUrl);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    const search = (await (await fetch(`${s.baseUrl}/Patient?identifier=urn:test|pat_1`)).json()) as { entry: { resource: { id: string } }[] };
    expect(search.entry.map((e) => e.resource.id)).toEqual([first.body.id]);
  });

  it('answers 404 for an unknown id and 400 for a body that is not JSON', async () => {
    const s = await start();
    expect((await fetch(`${s.baseUrl}/Patient/nope`)).status).toBe(404);
    const bad = await fetch(`${s.baseUrl}/Patient`, { method: 'POST', headers: { 'content-type': 'application/fhir+json' }, body: '{nope' });
    expect(bad.status).toBe(400);
  });

  it('keeps its data across a restart when given a data file', async () => {
    const file = join(dir, 'fhir.jsonl');
    const s1 = await start(file);
    const created = await conditionalCreate(s1.baseUrl);
    await s1.close();
    const s2 = await start(file, s1.port);
    const read = await fetch(`${s2.baseUrl}/Patient/${created.body.id}`);
    expect(read.status).toBe(200);
    const restored = (await read.json()) as { id: string; meta: { versionId: string; lastUpdated: string } };
    expect(restored.id).toBe(created.body.id);
    // The same version, not a new one: a restart must not make every record look changed (the EMR scan's watermark).
    expect(restored.meta).toMatchObject({ versionId: created.body.meta.versionId, lastUpdated: created.body.meta.lastUpdated });
    expect((await conditionalCreate(s2.baseUrl)).body.id).toBe(created.body.id);
  });
});

describe('bundled FHIR server transactions', () => {
  it('declares the transaction and batch interactions', async () => {
    const s = await start();
    const cs = (await (await fetch(`${s.baseUrl}/metadata`)).json()) as { rest: { interaction?: { code: string }[] }[] };
    expect(cs.rest[0]!.interaction?.map((i) => i.code)).toEqual(['transaction', 'batch']);
  });

  it('creates each entry once, rewriting urn:uuid references to the ids made, and finds them again (200) when the same transaction comes twice', async () => {
    const s = await start();
    const first = await postToBase(s.baseUrl, appointmentTransaction('pat_t1', 'apt_t1'));
    expect(first.status).toBe(200);
    expect(first.body.type).toBe('transaction-response');
    expect(first.body.entry.map((e) => e.response.status)).toEqual(['201', '201']);
    const [patientId, appointmentId] = first.body.entry.map((e) => e.response.location.split('/')[1]!);
    expect(first.body.entry.map((e) => e.response.location)).toEqual([`Patient/${patientId}`, `Appointment/${appointmentId}`]);
    const appointment = (await (await fetch(`${s.baseUrl}/Appointment/${appointmentId}`)).json()) as { participant: { actor: { reference: string } }[] };
    expect(appointment.participant[0]!.actor.reference).toBe(`Patient/${patientId}`);

    const again = await postToBase(s.baseUrl, appointmentTransaction('pat_t1', 'apt_t1'));
    expect(again.body.entry.map((e) => e.response.status)).toEqual(['200', '200']);
    expect(again.body.entry.map((e) => e.response.location)).toEqual([`Patient/${patientId}`, `Appointment/${appointmentId}`]);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|pat_t1')).toBe(1);
    expect(await count(s.baseUrl, 'Appointment?identifier=urn:test|apt_t1')).toBe(1);
  });

  it('keeps what a transaction wrote across a restart when given a data file', async () => {
    const file = join(dir, 'fhir-transactions.jsonl');
    const s1 = await start(file);
    const made = await postToBase(s1.baseUrl, appointmentTransaction('pat_t2', 'apt_t2'));
    await s1.close();
    const s2 = await start(file, s1.port);
    for (const location of made.body.entry.map((e) => e.response.location)) expect((await fetch(`${s2.baseUrl}/${location}`)).status).toBe(200);
    expect((await postToBase(s2.baseUrl, appointmentTransaction('pat_t2', 'apt_t2'))).body.entry.map((e) => e.response.status)).toEqual(['200', '200']);
  });

  it('with transactions off, declares neither interaction and refuses a Bundle posted to the base (405), creating nothing', async () => {
    const s = await start(undefined, 0, { transactions: false });
    const cs = (await (await fetch(`${s.baseUrl}/metadata`)).json()) as { rest: { interaction?: unknown }[] };
    expect(cs.rest[0]!.interaction).toBeUndefined();
    for (const type of ['transaction', 'batch']) {
      const refused = await postToBase(s.baseUrl, { ...appointmentTransaction('pat_t3', 'apt_t3'), type });
      expect(refused.status).toBe(405);
      expect(refused.body.resourceType).toBe('OperationOutcome');
    }
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|pat_t3')).toBe(0);
  });

  it("without conditional create, ignores an entry's ifNoneExist as it ignores If-None-Exist: each transaction makes new records", async () => {
    const s = await start(undefined, 0, { conditionalCreate: false });
    for (let i = 0; i < 2; i++)
      expect((await postToBase(s.baseUrl, appointmentTransaction('pat_t4', 'apt_t4'))).body.entry.map((e) => e.response.status)).toEqual(['201', '201']);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|pat_t4')).toBe(2);
  });
});
