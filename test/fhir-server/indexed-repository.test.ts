// The bundled FHIR server's indexed repository answers exactly what Medplum's MemoryRepository search
// answers on the same data (same Bundle, byte for byte), without Medplum's full scan when the search has an
// identifier=<system>|<value> or a _lastUpdated=ge|gt|eq filter: identifiers changed, deleted, re-created,
// shared, in other letter case; DocumentReference.masterIdentifier; watermarks of every kind; a random
// sequence of writes; and the journal replay at start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSearchRequest } from '@medplum/core';
import { FhirRouter, MemoryRepository } from '@medplum/fhir-router';
import type { Bundle, DocumentReference, Patient, Resource } from '@medplum/fhirtypes';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadFhirDefinitions } from '../../src/fhir-server/definitions.ts';
import { createFhirHandler } from '../../src/fhir-server/fhir-handler.ts';
import { IndexedMemoryRepository } from '../../src/fhir-server/indexed-repository.ts';
import { silentLogger } from '../../src/logger.ts';

beforeAll(() => loadFhirDefinitions());
afterEach(() => vi.restoreAllMocks());

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-fhir-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The indexed answer and Medplum's own full scan over the same repository, and whether the scan ran. */
async function answers(repo: IndexedMemoryRepository, query: string): Promise<{ indexed: Bundle; medplum: Bundle; scanned: boolean }> {
  const scan = vi.spyOn(MemoryRepository.prototype, 'search');
  const indexed = await repo.search(parseSearchRequest(query));
  const scanned = scan.mock.contexts.includes(repo);
  scan.mockRestore();
  const medplum = await MemoryRepository.prototype.search.call(repo, parseSearchRequest(query));
  return { indexed, medplum, scanned };
}

async function expectSame(repo: IndexedMemoryRepository, query: string, o: { indexed: boolean }): Promise<Bundle> {
  const a = await answers(repo, query);
  expect(JSON.stringify(a.indexed), query).toBe(JSON.stringify(a.medplum));
  expect(a.scanned, `${query}: ${o.indexed ? 'answered from the index' : "Medplum's full scan"}`).toBe(!o.indexed);
  return a.indexed;
}

const ids = (b: Bundle) => (b.entry ?? []).map((e) => e.resource!.id);
const patient = (identifier: Patient['identifier'], extra: Partial<Patient> = {}): Patient => ({ resourceType: 'Patient', identifier, ...extra });

describe('identifier search', () => {
  it('answers as Medplum does: changed, deleted, re-created, shared identifiers, letter case, several values, extra filters', async () => {
    const repo = new IndexedMemoryRepository();
    const p1 = await repo.createResource(
      patient(
        [
          { system: 'urn:a', value: 'p1' },
          { system: 'urn:b', value: 'B-1', type: { text: 'MRN' } },
        ],
        { gender: 'female' },
      ),
    );
    const moved = await repo.createResource(patient([{ system: 'urn:a', value: 'old' }]));
    await repo.updateResource({ ...moved, identifier: [{ system: 'urn:a', value: 'new' }] });
    const gone = await repo.createResource(patient([{ system: 'urn:a', value: 'gone' }]));
    await repo.deleteResource('Patient', gone.id);
    const back = await repo.createResource(patient([{ system: 'urn:a', value: 'back' }]));
    await repo.deleteResource('Patient', back.id);
    const dupA = await repo.createResource(patient([{ system: 'urn:a', value: 'dup' }], { gender: 'male' }));
    const dupB = await repo.createResource(patient([{ system: 'URN:A', value: 'DUP' }], { gender: 'female' }));
    // Deleted, then written again under its old id: it moves to the end of Medplum's order.
    await repo.updateResource({ ...back, identifier: [{ system: 'urn:a', value: 'dup' }] });
    await repo.createResource(patient([{ value: 'no-system' }]));
    await repo.createResource(patient([{ system: 'urn:a', value: 'bar|in|value' }]));

    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|p1&_count=1', { indexed: true }))).toEqual([p1.id]);
    expect(ids(await expectSame(repo, 'Patient?identifier=URN:A|P1', { indexed: true }))).toEqual([p1.id]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:b|b-1', { indexed: true }))).toEqual([p1.id]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|old', { indexed: true }))).toEqual([]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|new', { indexed: true }))).toEqual([moved.id]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|gone', { indexed: true }))).toEqual([]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|back', { indexed: true }))).toEqual([]);
    expect(ids(await expectSame(repo, 'Patient?identifier=urn:a|dup', { indexed: true }))).toEqual([dupA.id, dupB.id, back.id]);
    for (const q of [
      'Patient?identifier=urn:a|dup&_count=1',
      'Patient?identifier=urn:a|dup&_count=1&_offset=1',
      'Patient?identifier=urn:a|dup&_offset=5',
      'Patient?identifier=urn:a|dup&_sort=-_lastUpdated',
      'Patient?identifier=urn:a|dup&_sort=gender',
      'Patient?identifier=urn:a|dup&gender=female',
      'Patient?identifier=urn:a|dup&identifier=urn:a|p1',
      'Patient?identifier=urn:a|p1,urn:a|new,urn:zz|none',
      'Patient?identifier=urn:a|bar|in|value',
      'Patient?identifier=urn:a|bar',
      'Patient?identifier=urn:a|nobody',
      'Patient?identifier=urn:a|p1&_total=accurate&_summary=count',
      'Appointment?identifier=urn:a|p1',
      'Communication?identifier=urn:a|p1',
    ])
      await expectSame(repo, q, { indexed: true });
    // Not the index's: no system, no value, a modifier, no identifier filter.
    for (const q of [
      'Patient?identifier=p1',
      'Patient?identifier=|no-system',
      'Patient?identifier=urn:a|',
      'Patient?identifier:not=urn:a|p1',
      'Patient?identifier:missing=true',
      'Patient?gender=female',
      'Patient',
    ])
      await expectSame(repo, q, { indexed: false });
  });

  it("indexes what the type's identifier parameter covers: DocumentReference.masterIdentifier too", async () => {
    const repo = new IndexedMemoryRepository();
    const doc = await repo.createResource<DocumentReference>({
      resourceType: 'DocumentReference',
      status: 'current',
      masterIdentifier: { system: 'urn:doc', value: 'm-1' },
      identifier: [{ system: 'urn:doc', value: 'i-1' }],
      content: [{ attachment: { url: 'x' } }],
    });
    expect(ids(await expectSame(repo, 'DocumentReference?identifier=urn:doc|m-1', { indexed: true }))).toEqual([doc.id]);
    expect(ids(await expectSame(repo, 'DocumentReference?identifier=urn:doc|i-1', { indexed: true }))).toEqual([doc.id]);
  });

  it('keeps agreeing with Medplum over a random sequence of creates, identifier changes, deletes and re-creates', async () => {
    const repo = new IndexedMemoryRepository();
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const values = ['v0', 'v1', 'V1', 'v2', 'v3', 'v4'];
    const systems = ['urn:a', 'urn:b', 'URN:A'];
    const identifier = () => Array.from({ length: rand(3) }, () => ({ system: systems[rand(3)]!, value: values[rand(values.length)]! }));
    const live = new Map<string, Resource>();
    const dead: string[] = [];
    for (let step = 0; step < 400; step++) {
      const op = rand(10);
      const someLive = [...live.values()][rand(Math.max(live.size, 1))];
      if (op < 4 || !someLive) {
        const r = await repo.createResource(patient(identifier()));
        live.set(r.id, r);
      } else if (op < 7) {
        const r = await repo.updateResource({ ...(someLive as Patient), identifier: identifier() });
        live.set(r.id, r);
      } else if (op < 9) {
        await repo.deleteResource('Patient', someLive.id!);
        live.delete(someLive.id!);
        dead.push(someLive.id!);
      } else if (dead.length) {
        const r = await repo.updateResource(patient(identifier(), { id: dead.pop()! }));
        live.set(r.id, r);
      }
      if (step % 20 === 19)
        for (const s of systems)
          for (const v of values) await expectSame(repo, `Patient?identifier=${s}|${v}&_count=${1 + rand(3)}&_offset=${rand(2)}`, { indexed: true });
    }
    await expect(repo.deleteResource('Patient', 'never-there')).rejects.toThrow();
    await expectSame(repo, 'Patient?identifier=urn:a|v1', { indexed: true });
  });

  it('conditional create and conditional update through the router find what the index holds', async () => {
    const repo = new IndexedMemoryRepository();
    const router = new FhirRouter();
    const call = async (method: 'POST' | 'PUT' | 'GET', url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const [outcome, resource] = await router.handleRequest({ method, url, pathname: '', query: {}, params: {}, body, headers }, repo);
      return {
        status: Number(outcome.id === 'created' ? 201 : outcome.issue?.[0]?.code === 'informational' ? 200 : 400),
        resource: resource as Resource & { id: string },
      };
    };
    const first = await call('POST', 'Patient', patient([{ system: 'urn:a', value: 'c1' }]), { 'if-none-exist': 'identifier=urn:a|c1' });
    const again = await call('POST', 'Patient', patient([{ system: 'urn:a', value: 'c1' }]), { 'if-none-exist': 'identifier=urn:a|c1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.resource.id).toBe(first.resource.id);
    // The identifier moves: the old one no longer claims it, the new one does.
    await call('PUT', `Patient/${first.resource.id}`, { ...first.resource, identifier: [{ system: 'urn:a', value: 'c2' }] });
    expect((await call('POST', 'Patient', patient([{ system: 'urn:a', value: 'c2' }]), { 'if-none-exist': 'identifier=urn:a|c2' })).resource.id).toBe(
      first.resource.id,
    );
    const fresh = await call('POST', 'Patient', patient([{ system: 'urn:a', value: 'c1' }]), { 'if-none-exist': 'identifier=urn:a|c1' });
    expect(fresh.status).toBe(201);
    expect(fresh.resource.id).not.toBe(first.resource.id);
    // Conditional update (the adapter's document outcome): creates, then updates the same resource.
    const comm = { resourceType: 'Communication', status: 'completed', identifier: [{ system: 'urn:a', value: 'document-outcome:d1' }] };
    const made = await call('PUT', 'Communication?identifier=urn:a|document-outcome:d1', comm);
    const updated = await call('PUT', 'Communication?identifier=urn:a|document-outcome:d1', { ...comm, status: 'stopped' });
    expect(made.status).toBe(201);
    expect(updated.resource.id).toBe(made.resource.id);
    const found = (await call('GET', 'Communication?identifier=urn:a|document-outcome:d1')).resource as unknown as Bundle;
    expect(found).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 1, entry: [{ resource: { id: made.resource.id, status: 'stopped' } }] });
  });
});

describe('_lastUpdated search (the document scan)', () => {
  const LOINC = 'http://loinc.org';
  const doc = (lastUpdated: string | undefined, code: string, status: DocumentReference['status'] = 'current'): DocumentReference => ({
    resourceType: 'DocumentReference',
    status,
    type: { coding: [{ system: LOINC, code }] },
    content: [{ attachment: { url: 'http://x' } }],
    ...(lastUpdated ? { meta: { lastUpdated } } : {}),
  });

  it("answers the adapter's scan, and every other lower bound, as Medplum does", async () => {
    const repo = new IndexedMemoryRepository();
    const stamps = [
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T12:00:00.000Z',
      '2026-01-01T12:00:00.000Z',
      '2026-01-02T00:00:00Z',
      '2026-01-02T09:30:00.000+02:00',
      '2026-01-03',
      '2026-01-03T23:59:59.999Z',
      '2026-02-01T00:00:00.000Z',
    ];
    const docs: DocumentReference[] = [];
    for (const [i, at] of stamps.entries())
      docs.push(await repo.createResource(doc(at, i % 3 === 0 ? '11502-2' : '57833-6', i === 4 ? 'superseded' : 'current')));
    for (let i = 0; i < 30; i++) await repo.createResource(doc(`2025-12-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00.000Z`, '57833-6'));
    const scan = (since: string, extra = '') =>
      `DocumentReference?status=current&type=${encodeURIComponent('11502-2,57833-6')}&_lastUpdated=ge${encodeURIComponent(since)}&_sort=_lastUpdated&_count=100&_offset=0${extra}`;
    for (const since of [
      ...stamps,
      '2026-01-01T11:59:59.999Z',
      '2026-01-02T07:30:00.000Z',
      '2026-01-01',
      '2026',
      '2027-01-01T00:00:00.000Z',
      '2000-01-01T00:00:00.000Z',
    ])
      await expectSame(repo, scan(since), { indexed: true });
    await expectSame(repo, scan('2026-01-01T00:00:00.000Z', '&_count=2&_offset=2'), { indexed: true });
    for (const q of [
      'DocumentReference?_lastUpdated=gt2026-01-01T12:00:00.000Z',
      'DocumentReference?_lastUpdated=eq2026-01-03',
      'DocumentReference?_lastUpdated=2026-01-02',
      'DocumentReference?_lastUpdated=ge2026-01-02T00:00:00.000%2B05:00',
    ])
      await expectSame(repo, q, { indexed: true });
    for (const q of [
      'DocumentReference?_lastUpdated=lt2026-01-02',
      'DocumentReference?_lastUpdated=le2026-01-02',
      'DocumentReference?_lastUpdated=ne2026-01-02',
      'DocumentReference?_lastUpdated=sa2026-01-02',
      'DocumentReference?status=current',
    ])
      await expectSame(repo, q, { indexed: false });

    // The index follows writes once built: an update moves a document to now, a delete drops it.
    await repo.updateResource({ ...docs[0]!, description: 'amended' });
    await repo.deleteResource('DocumentReference', docs[7]!.id!);
    await repo.createResource(doc('2026-01-05T00:00:00.000Z', '11502-2'));
    for (const since of ['2026-01-01T00:00:00.000Z', '2026-01-04T00:00:00.000Z', new Date(Date.now() - 60_000).toISOString()])
      await expectSame(repo, scan(since), { indexed: true });
    const recent = await expectSame(repo, scan(new Date(Date.now() - 60_000).toISOString()), { indexed: true });
    expect(ids(recent)).toEqual([docs[0]!.id]);
  });

  it('leaves a watermark far back (most of the type) to the full scan, with the same answer', async () => {
    const repo = new IndexedMemoryRepository();
    for (let i = 0; i < 1500; i++) await repo.createResource(doc(undefined, '11502-2'));
    await expectSame(repo, 'DocumentReference?_lastUpdated=ge2000-01-01&_count=5', { indexed: false });
    await expectSame(repo, `DocumentReference?_lastUpdated=ge${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`, { indexed: true });
  });
});

describe('journal replay', () => {
  it('indexes what it restores: the last line for an id wins, deletions stay deleted', async () => {
    const file = join(dir, 'replay.jsonl');
    const lines = [
      { resourceType: 'Patient', id: 'a', identifier: [{ system: 'urn:a', value: 'first' }] },
      { resourceType: 'Patient', id: 'b', identifier: [{ system: 'urn:a', value: 'b' }] },
      { resourceType: 'Patient', id: 'a', identifier: [{ system: 'urn:a', value: 'second' }] },
      { deleted: 'Patient/b' },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const fhir = await createFhirHandler({ logger: silentLogger(), conditionalCreate: true, dataFile: file });
    const search = async (value: string) =>
      ids((await fhir({ method: 'GET', url: `/Patient?identifier=urn:a|${value}`, headers: {}, body: undefined })).body as Bundle);
    expect(await search('second')).toEqual(['a']);
    expect(await search('first')).toEqual([]);
    expect(await search('b')).toEqual([]);
    const claim = await fhir({
      method: 'POST',
      url: '/Patient',
      headers: { 'if-none-exist': 'identifier=urn:a|second' },
      body: patient([{ system: 'urn:a', value: 'second' }]),
    });
    expect(claim.status).toBe(200);
    expect((claim.body as Resource).id).toBe('a');
  });
});
