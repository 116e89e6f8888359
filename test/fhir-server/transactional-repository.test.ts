// The bundled FHIR server's repository transactions: a callback that throws leaves everything it wrote as it
// stood (resources, versions, the type's order, the identifier and _lastUpdated indexes); a nested one joins the
// outer; the router's transaction Bundle is all or nothing over it; and transactions, writes and reads from
// outside never see or undo each other's uncommitted records; and a resource's history comes newest first however
// often it is read.
import { getStatus, parseSearchRequest } from '@medplum/core';
import { FhirRouter, MemoryRepository } from '@medplum/fhir-router';
import type { Bundle, Patient } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { createManualClock, toIso } from '../../src/clock.ts';
import { loadFhirDefinitions } from '../../src/fhir-server/definitions.ts';
import { TransactionalRepository } from '../../src/fhir-server/transactional-repository.ts';

beforeAll(() => loadFhirDefinitions());

const patient = (value: string, extra: Partial<Patient> = {}): Patient => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:test', value }],
  ...extra,
});

const ids = (b: Bundle) => (b.entry ?? []).map((e) => e.resource!.id);

/** The repository's answer, checked against Medplum's full scan of the same data (the indexes choose candidates only). */
async function search(repo: TransactionalRepository, query: string): Promise<Bundle> {
  const answer = await repo.search(parseSearchRequest(query));
  expect(JSON.stringify(answer), query).toBe(JSON.stringify(await MemoryRepository.prototype.search.call(repo, parseSearchRequest(query))));
  return answer;
}

/** What a client can read of the patients: the search in Medplum's order and every version of each. */
async function readable(repo: TransactionalRepository): Promise<string> {
  const all = await repo.search(parseSearchRequest('Patient'));
  const versions: string[][] = [];
  for (const id of ids(all)) {
    const history = await repo.readHistory('Patient', id!);
    versions.push((history.entry ?? []).map((e) => JSON.stringify(e.resource)));
  }
  return JSON.stringify({ all, versions });
}

/** A promise a test settles when it wants, to hold a transaction open at an await. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const turns = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('a transaction that fails', () => {
  it('leaves every resource as it stood: creates, updates, deletes, versions, the order and both indexes; its error goes on', async () => {
    const clock = createManualClock();
    const start = toIso(clock.now());
    const repo = new TransactionalRepository(clock);
    const a = await repo.createResource(patient('a'));
    const b = await repo.createResource(patient('b'));
    const c = await repo.createResource(patient('c'));
    await repo.updateResource({ ...b, gender: 'male' });
    expect(ids(await search(repo, `Patient?_lastUpdated=ge${start}`))).toEqual([a.id, b.id, c.id]); // the index exists before
    const before = await readable(repo);

    clock.advance(60_000);
    const failure = new Error('the last entry failed');
    const failed = repo.withTransaction(async () => {
      await repo.createResource(patient('new'));
      await repo.updateResource({ ...c, identifier: [{ system: 'urn:test', value: 'c-moved' }] });
      await repo.patchResource('Patient', c.id, [{ op: 'add', path: '/gender', value: 'female' }]);
      await repo.deleteResource('Patient', b.id);
      await repo.createResource({ ...patient('b-again'), id: b.id });
      await repo.deleteResource('Patient', a.id); // put back by a Map.set, it would come last
      throw failure;
    });
    await expect(failed).rejects.toBe(failure);

    expect(await readable(repo)).toBe(before);
    expect(ids(await search(repo, 'Patient?identifier=urn:test|a'))).toEqual([a.id]);
    expect(ids(await search(repo, 'Patient?identifier=urn:test|b'))).toEqual([b.id]);
    expect(ids(await search(repo, 'Patient?identifier=urn:test|c'))).toEqual([c.id]);
    for (const gone of ['new', 'c-moved', 'b-again']) expect(ids(await search(repo, `Patient?identifier=urn:test|${gone}`))).toEqual([]);
    expect(ids(await search(repo, `Patient?_lastUpdated=ge${start}`))).toEqual([a.id, b.id, c.id]);
    expect(ids(await search(repo, `Patient?_lastUpdated=ge${toIso(clock.now())}`))).toEqual([]);
    expect((await repo.readResource<Patient>('Patient', c.id)).meta?.versionId).toBe(c.meta?.versionId);
  });

  it('leaves nothing of its own in a _lastUpdated index first built while it was open', async () => {
    const clock = createManualClock();
    const repo = new TransactionalRepository(clock);
    const kept = await repo.createResource(patient('kept'));
    clock.advance(1_000);
    const query = `Patient?_lastUpdated=ge${toIso(clock.now() - 5_000)}`;
    await expect(
      repo.withTransaction(async () => {
        await repo.createResource(patient('made'));
        expect((await search(repo, query)).entry).toHaveLength(2);
        throw new Error('fails after the index was built');
      }),
    ).rejects.toThrow('fails after');
    expect(ids(await search(repo, query))).toEqual([kept.id]);
  });

  it('keeps everything a transaction that returns wrote', async () => {
    const repo = new TransactionalRepository();
    const made = await repo.withTransaction(async () => repo.createResource(patient('made')));
    expect(ids(await search(repo, 'Patient?identifier=urn:test|made'))).toEqual([made.id]);
  });
});

describe('a nested transaction', () => {
  it('joins the outer one: it does not commit on its own, and its error let through undoes the outer writes too', async () => {
    const repo = new TransactionalRepository();
    await expect(
      repo.withTransaction(async () => {
        await repo.createResource(patient('outer'));
        await repo.withTransaction(async () => repo.createResource(patient('inner')));
        throw new Error('after the inner one returned');
      }),
    ).rejects.toThrow('after the inner');
    await expect(
      repo.withTransaction(async () => {
        await repo.createResource(patient('outer'));
        await repo.withTransaction(async () => {
          await repo.createResource(patient('inner'));
          throw new Error('inner');
        });
      }),
    ).rejects.toThrow('inner');
    expect(ids(await search(repo, 'Patient'))).toEqual([]);
  });
});

describe("the router's transaction Bundle over the repository", () => {
  const request = (body: unknown) => ({ method: 'POST' as const, url: '/', pathname: '', query: {}, params: {}, body, config: { transactions: true } });
  const appointmentBundle = (extra: unknown[] = []) => ({
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      {
        fullUrl: 'urn:uuid:3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        resource: patient('p'),
        request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:test|p' },
      },
      {
        resource: {
          resourceType: 'Appointment',
          status: 'booked',
          identifier: [{ system: 'urn:test', value: 'apt' }],
          participant: [{ actor: { reference: 'urn:uuid:3f2504e0-4f89-41d3-9a0c-0305e82c3301' }, status: 'accepted' }],
        },
        request: { method: 'POST', url: 'Appointment', ifNoneExist: 'identifier=urn:test|apt' },
      },
      ...extra,
    ],
  });

  it('writes none of its entries, conditional creates included, when one fails, and answers that entry’s error', async () => {
    const repo = new TransactionalRepository();
    const router = new FhirRouter();
    const badEntry = { resource: { resourceType: 'Practitioner' }, request: { method: 'POST', url: 'Patient' } };
    const [failed] = await router.handleRequest(request(appointmentBundle([badEntry])), repo);
    expect(getStatus(failed)).toBe(400);
    expect(ids(await search(repo, 'Patient'))).toEqual([]);
    expect(ids(await search(repo, 'Appointment'))).toEqual([]);

    const [ok, answer] = await router.handleRequest(request(appointmentBundle()), repo);
    expect(getStatus(ok)).toBe(200);
    expect((answer as Bundle).entry?.map((e) => e.response?.status)).toEqual(['201', '201']);
  });
});

describe('transactions at the same time', () => {
  it('run one at a time: the second sees nothing the first has not committed, and the first’s rollback leaves the second’s writes', async () => {
    const repo = new TransactionalRepository();
    const x = await repo.createResource(patient('x', { gender: 'unknown' }));
    const held = gate();
    const steps: string[] = [];
    const first = repo.withTransaction(async () => {
      steps.push('first starts');
      await repo.updateResource({ ...x, gender: 'male' });
      await repo.createResource(patient('first'));
      await held.opened;
      steps.push('first fails');
      throw new Error('first fails');
    });
    const second = repo.withTransaction(async () => {
      steps.push('second starts');
      const seen = await repo.searchResources(parseSearchRequest('Patient?identifier=urn:test|first'));
      const current = await repo.readResource<Patient>('Patient', x.id);
      await repo.updateResource({ ...current, gender: 'female' });
      return { seen: seen.length, genderSeen: current.gender };
    });
    await turns();
    expect(steps).toEqual(['first starts']);
    held.open();
    await expect(first).rejects.toThrow('first fails');
    expect(await second).toEqual({ seen: 0, genderSeen: 'unknown' });
    expect(steps).toEqual(['first starts', 'first fails', 'second starts']);
    expect((await repo.readResource<Patient>('Patient', x.id)).gender).toBe('female');
  });

  it('hold off writes and reads from outside: a read never sees the open one’s records, and its rollback never undoes the write', async () => {
    const repo = new TransactionalRepository();
    const x = await repo.createResource(patient('x', { gender: 'unknown' }));
    const held = gate();
    const open = repo.withTransaction(async () => {
      await repo.createResource(patient('uncommitted'));
      await repo.updateResource({ ...x, gender: 'male' });
      await held.opened;
      throw new Error('rolled back');
    });
    await turns();
    const plain = repo.updateResource({ ...x, gender: 'female' });
    const conditional = repo.conditionalCreate(patient('uncommitted'), parseSearchRequest('Patient?identifier=urn:test|uncommitted'));
    const read = repo.searchResources(parseSearchRequest('Patient?identifier=urn:test|uncommitted'));
    await turns();
    held.open();
    await expect(open).rejects.toThrow('rolled back');
    await plain;
    // Queued behind the rolled-back transaction, the conditional create found nothing and made its own record.
    expect(getStatus((await conditional).outcome)).toBe(201);
    expect(await read).toHaveLength(1);
    expect((await read)[0]!.id).toBe((await conditional).resource.id);
    expect((await repo.readResource<Patient>('Patient', x.id)).gender).toBe('female');
  });
});

describe('a resource history', () => {
  it('comes newest first however often it is read, and a version written after a read goes first', async () => {
    const repo = new TransactionalRepository(createManualClock());
    const created = await repo.createResource(patient('h'));
    await repo.updateResource({ ...created, gender: 'female' });
    const versionsOf = async () => ((await repo.readHistory('Patient', created.id)).entry ?? []).map((e) => (e.resource as Patient).gender ?? 'none');
    expect(await versionsOf()).toEqual(['female', 'none']);
    expect(await versionsOf()).toEqual(['female', 'none']);
    await repo.updateResource({ ...created, gender: 'male' });
    expect(await versionsOf()).toEqual(['male', 'female', 'none']);
  });

  it('is not found for a resource that never was', async () => {
    const repo = new TransactionalRepository(createManualClock());
    await expect(repo.readHistory('Patient', 'missing')).rejects.toThrow(/not found/i);
  });
});
