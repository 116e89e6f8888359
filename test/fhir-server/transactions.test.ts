// The bundled FHIR server's transaction Bundles over HTTP are all or nothing: an entry that fails answers its
// error and leaves nothing of the others (by id, identifier, _lastUpdated, in the journal and after a restart),
// one that succeeds is one journal line (cut short by a crash, none of it comes back),
// while a batch keeps each entry on its own; and transactions sent at once apply as if one after another, over
// HTTP and through the handler begun in the same tick (where their awaits do interleave).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toIso } from '../../src/clock.ts';
import { loadFhirDefinitions } from '../../src/fhir-server/definitions.ts';
import { createFhirHandler, type FhirAnswer } from '../../src/fhir-server/fhir-handler.ts';
import { silentLogger } from '../../src/logger.ts';
import { appointmentTransaction, bundledServers, count, postToBase, type AnsweredBundle } from '../support/bundled-fhir.ts';

beforeAll(() => loadFhirDefinitions());

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-fhir-tx-'));
const { start, closeAll } = bundledServers();
afterAll(async () => {
  await closeAll();
  rmSync(dir, { recursive: true, force: true });
});

const patient = (value: string, extra: Record<string, unknown> = {}) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:test', value }],
  ...extra,
});

const transaction = (...entry: unknown[]) => ({ resourceType: 'Bundle', type: 'transaction', entry });
const post = (resource: { resourceType: string }) => ({ resource, request: { method: 'POST', url: resource.resourceType } });
const put = (id: string, resource: { resourceType: string }) => ({ resource: { ...resource, id }, request: { method: 'PUT', url: `Patient/${id}` } });
/** A create the router refuses (400): the resource is not of the type the URL names. */
const invalid = { resource: { resourceType: 'Practitioner' }, request: { method: 'POST', url: 'Patient' } };

const get = async (base: string, path: string) => {
  const res = await fetch(`${base}/${path}`);
  return { status: res.status, body: (await res.json()) as { id: string; gender?: string; meta: { versionId: string } } };
};

async function putPatient(base: string, id: string, resource: object) {
  const res = await fetch(`${base}/Patient/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/fhir+json' },
    body: JSON.stringify({ ...resource, id }),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { id: string; meta: { versionId: string } };
}

describe('a transaction with an entry that fails', () => {
  it('writes neither entry when the second is invalid: 400 with an OperationOutcome, nothing by id, identifier or _lastUpdated', async () => {
    const s = await start();
    const since = `Patient?_lastUpdated=ge${toIso(Date.now() - 60_000)}`;
    expect(await count(s.baseUrl, since)).toBe(0); // the _lastUpdated index is built before the transaction

    const updates = await postToBase(s.baseUrl, transaction(put('tx-a', patient('tx-a')), { ...invalid, request: { method: 'PUT', url: 'Patient/tx-b' } }));
    expect(updates.status).toBe(400);
    expect(updates.body.resourceType).toBe('OperationOutcome');
    expect(updates.body.issue?.[0]?.details?.text).toContain('Incorrect resource type');
    const creates = await postToBase(s.baseUrl, transaction(post(patient('tx-c')), invalid));
    expect(creates.status).toBe(400);
    expect(creates.body.resourceType).toBe('OperationOutcome');

    expect((await get(s.baseUrl, 'Patient/tx-a')).status).toBe(404);
    for (const value of ['tx-a', 'tx-c']) expect(await count(s.baseUrl, `Patient?identifier=urn:test|${value}`)).toBe(0);
    expect(await count(s.baseUrl, since)).toBe(0);
    expect(await count(s.baseUrl, 'Patient')).toBe(0);
  });

  it('leaves the records it updated and deleted as they were', async () => {
    const s = await start();
    const x = await putPatient(s.baseUrl, 'x', patient('x', { gender: 'unknown' }));
    await putPatient(s.baseUrl, 'y', patient('y'));
    const failingPatch = {
      resource: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'operation',
            part: [
              { name: 'op', valueCode: 'test' },
              { name: 'path', valueString: '/gender' },
              { name: 'value', valueString: '"male"' },
            ],
          },
        ],
      },
      request: { method: 'PATCH', url: 'Patient/x' },
    };
    // The router applies deletes, then updates, then patches: the patch fails after the others were written.
    const failed = await postToBase(
      s.baseUrl,
      transaction(put('x', patient('x-moved', { gender: 'female' })), { request: { method: 'DELETE', url: 'Patient/y' } }, failingPatch),
    );
    expect(failed.status).toBe(400);
    expect(failed.body.resourceType).toBe('OperationOutcome');

    const read = await get(s.baseUrl, 'Patient/x');
    expect(read.body).toMatchObject({ gender: 'unknown', meta: { versionId: x.meta.versionId } });
    expect(await count(s.baseUrl, 'Patient/x/_history')).toBe(1);
    expect((await get(s.baseUrl, 'Patient/y')).status).toBe(200);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|x')).toBe(1);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|x-moved')).toBe(0);
  });

  it('makes none of its conditional creates, and the same transaction without the failing entry makes each once', async () => {
    const s = await start();
    const claim = appointmentTransaction('pat_f1', 'apt_f1');
    const failed = await postToBase(s.baseUrl, { ...claim, entry: [...claim.entry, invalid] });
    expect(failed.status).toBe(400);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|pat_f1')).toBe(0);
    expect(await count(s.baseUrl, 'Appointment?identifier=urn:test|apt_f1')).toBe(0);

    const made = await postToBase(s.baseUrl, claim);
    expect(made.status).toBe(200);
    expect(made.body.entry.map((e) => e.response.status)).toEqual(['201', '201']);
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|pat_f1')).toBe(1);
  });

  it('answers 412 when a conditional create matches two records, and writes nothing', async () => {
    const s = await start();
    for (const id of ['twin-1', 'twin-2']) await putPatient(s.baseUrl, id, patient('twin'));
    const conditional = { resource: patient('twin'), request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:test|twin' } };
    const failed = await postToBase(s.baseUrl, transaction(post(patient('tx-before-twin')), conditional));
    expect(failed.status).toBe(412);
    expect(failed.body.resourceType).toBe('OperationOutcome');
    expect(await count(s.baseUrl, 'Patient?identifier=urn:test|tx-before-twin')).toBe(0);
    expect(await count(s.baseUrl, 'Patient')).toBe(2);
  });

  it("is refused (400) with more than 8 entries when one is conditional, as Medplum's own server refuses it", async () => {
    const s = await start();
    const conditional = (n: number) => ({
      ...post(patient(`big-${n}`)),
      request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=urn:test|big-${n}` },
    });
    const refused = await postToBase(s.baseUrl, transaction(...Array.from({ length: 9 }, (_, n) => conditional(n))));
    expect(refused.status).toBe(400);
    expect(refused.body.issue?.[0]?.details?.text).toContain('too many entries');
    expect(await count(s.baseUrl, 'Patient')).toBe(0);
    expect((await postToBase(s.baseUrl, transaction(...Array.from({ length: 8 }, (_, n) => conditional(n))))).status).toBe(200);
  });

  it('journals nothing: the data file holds none of its entries, and a restart shows nothing of it', async () => {
    const file = join(dir, 'failed-transaction.jsonl');
    const s1 = await start(file);
    await putPatient(s1.baseUrl, 'kept', patient('kept'));
    const journaled = readFileSync(file, 'utf8');
    expect((await postToBase(s1.baseUrl, transaction(put('tx-lost', patient('tx-lost')), post(patient('tx-lost-too')), invalid))).status).toBe(400);
    expect(readFileSync(file, 'utf8')).toBe(journaled);
    await s1.close();

    const s2 = await start(file); // another port: fetch may still pool a socket to the closed server
    expect((await get(s2.baseUrl, 'Patient/kept')).status).toBe(200);
    expect((await get(s2.baseUrl, 'Patient/tx-lost')).status).toBe(404);
    expect(await count(s2.baseUrl, 'Patient?identifier=urn:test|tx-lost-too')).toBe(0);
    expect(await count(s2.baseUrl, 'Patient')).toBe(1);
  });

  it('journals a committed transaction as one line, so a line torn by a crash loses the whole request, not part of it', async () => {
    const file = join(dir, 'one-line.jsonl');
    const s1 = await start(file);
    await putPatient(s1.baseUrl, 'before', patient('before'));
    const before = readFileSync(file, 'utf8');
    expect((await postToBase(s1.baseUrl, appointmentTransaction('pat-line', 'appt-line'))).status).toBe(200);
    const added = readFileSync(file, 'utf8').slice(before.length);
    expect(added.split('\n').filter(Boolean)).toHaveLength(1);
    await s1.close();

    // The same request's line cut short, as a crash in the middle of its write would leave it.
    writeFileSync(file, before + added.slice(0, Math.floor(added.length / 2)));
    const s2 = await start(file);
    expect((await get(s2.baseUrl, 'Patient/before')).status).toBe(200);
    expect(await count(s2.baseUrl, 'Patient?identifier=urn:test|pat-line')).toBe(0);
    expect(await count(s2.baseUrl, 'Appointment')).toBe(0);
    await s2.close();

    writeFileSync(file, before + added);
    const s3 = await start(file);
    expect(await count(s3.baseUrl, 'Patient?identifier=urn:test|pat-line')).toBe(1);
    expect(await count(s3.baseUrl, 'Appointment?identifier=urn:test|appt-line')).toBe(1);
  });
});

describe('a batch', () => {
  it('keeps each entry on its own: the failing one is answered in its place, the others are written and journaled', async () => {
    const file = join(dir, 'batch.jsonl');
    const s1 = await start(file);
    const answered = await postToBase(s1.baseUrl, { resourceType: 'Bundle', type: 'batch', entry: [post(patient('batch-ok')), invalid] });
    expect(answered.status).toBe(200);
    expect(answered.body.type).toBe('batch-response');
    expect(answered.body.entry.map((e) => e.response.status)).toEqual(['201', '400']);
    expect(await count(s1.baseUrl, 'Patient?identifier=urn:test|batch-ok')).toBe(1);
    await s1.close();
    const s2 = await start(file); // another port: fetch may still pool a socket to the closed server
    expect(await count(s2.baseUrl, 'Patient?identifier=urn:test|batch-ok')).toBe(1);
  });
});

describe('transactions sent at once', () => {
  it('that create the same new patient both apply: one patient, and both appointments name it', async () => {
    const s = await start();
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([
        postToBase(s.baseUrl, appointmentTransaction(`pat_s${round}`, `apt_s${round}a`)),
        postToBase(s.baseUrl, appointmentTransaction(`pat_s${round}`, `apt_s${round}b`)),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([a, b].map((t) => t.body.entry[0]!.response.status).sort()).toEqual(['200', '201']);
      const patientLocation = a.body.entry[0]!.response.location;
      expect(b.body.entry[0]!.response.location).toBe(patientLocation);
      expect(await count(s.baseUrl, `Patient?identifier=urn:test|pat_s${round}`)).toBe(1);
      for (const t of [a, b]) {
        const appointment = await fetch(`${s.baseUrl}/${t.body.entry[1]!.response.location}`);
        const body = (await appointment.json()) as { participant: { actor: { reference: string } }[] };
        expect(body.participant[0]!.actor.reference).toBe(patientLocation);
      }
    }
  });

  it('apply the valid ones whole, and a failing one never undoes their writes', async () => {
    const s = await start();
    const sent = Array.from({ length: 12 }, (_, i) => {
      const claim = appointmentTransaction(`pat_m${i}`, `apt_m${i}`);
      return i % 2 === 0 ? claim : { ...claim, entry: [...claim.entry, invalid] };
    });
    const answers = await Promise.all(sent.map((bundle) => postToBase(s.baseUrl, bundle)));
    for (const [i, answer] of answers.entries()) {
      const valid = i % 2 === 0;
      expect(answer.status, `transaction ${i}`).toBe(valid ? 200 : 400);
      expect(await count(s.baseUrl, `Patient?identifier=urn:test|pat_m${i}`), `transaction ${i}`).toBe(valid ? 1 : 0);
      expect(await count(s.baseUrl, `Appointment?identifier=urn:test|apt_m${i}`), `transaction ${i}`).toBe(valid ? 1 : 0);
    }
  });
});

describe('transactions begun in the same tick through the handler', () => {
  // Over HTTP a request is handled to its end before the next is read (nothing in it waits on I/O); begun in the
  // same tick, two requests' awaits interleave, as they would were the handling ever to wait on I/O.
  async function handler() {
    const handle = await createFhirHandler({ logger: silentLogger(), conditionalCreate: true });
    const send = (body: unknown) => handle({ method: 'POST', url: '/', headers: {}, body });
    const read = async (path: string) => handle({ method: 'GET', url: `/${path}`, headers: {}, body: undefined });
    return { send, read };
  }
  const entries = (answer: FhirAnswer) => (answer.body as AnsweredBundle).entry;

  it('that create the same new patient: one patient, found by the second, and both appointments name it', async () => {
    const { send, read } = await handler();
    const [a, b] = await Promise.all([send(appointmentTransaction('pat_h1', 'apt_h1a')), send(appointmentTransaction('pat_h1', 'apt_h1b'))]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(entries(b).map((e) => e.response.status)).toEqual(['200', '201']);
    const patientLocation = entries(a)[0]!.response.location;
    expect(entries(b)[0]!.response.location).toBe(patientLocation);
    for (const answer of [a, b]) {
      const appointment = await read(entries(answer)[1]!.response.location);
      expect((appointment.body as { participant: { actor: { reference: string } }[] }).participant[0]!.actor.reference).toBe(patientLocation);
    }
  });

  it('a failing one never undoes what a valid one wrote to the same record after it', async () => {
    const { send, read } = await handler();
    await send(transaction(put('shared', patient('shared', { gender: 'unknown' }))));
    // Entries around the shared one, so that were the two to interleave, the valid one's write of it would land
    // between the failing one's write and its failure (and be put back to `unknown` by the rollback).
    const padding = (prefix: string) => [1, 2, 3].map((n) => put(`${prefix}${n}`, patient(`${prefix}${n}`)));
    const failing = transaction(put('shared', patient('shared', { gender: 'male' })), ...padding('f'), {
      ...invalid,
      request: { method: 'PUT', url: 'Patient/other' },
    });
    const valid = transaction(...padding('v'), put('shared', patient('shared', { gender: 'female' })));
    const [failed, applied] = await Promise.all([send(failing), send(valid)]);
    expect([failed.status, applied.status]).toEqual([400, 200]);
    expect(((await read('Patient/shared')).body as { gender: string }).gender).toBe('female');
    expect((await read('Patient/f1')).status).toBe(404);
    expect((await read('Patient/v1')).status).toBe(200);
  });
});
