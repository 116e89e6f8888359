// Changes on the vendor profile over HTTP: every read, create and change answers its ETag; a JSON Patch of a
// Patient or an Appointment needs If-Match (428 without it, counted), answers 412 when the version it names is no
// longer the current one and 200 with the record and a new ETag when it is; a patch that is not one, or does not
// apply, is refused and changes nothing.
import { describe, expect, it } from 'vitest';
import { book, call, createPatient, startVendor, why } from './support.ts';

const MONDAY_9AM = '2026-03-09T13:00:00Z';
const counters = async (base: string) => (await call<{ withoutIfMatch: number; refused: Record<string, number> }>(base, 'GET', '_control/counters')).body;
const activate = [{ op: 'add', path: '/active', value: true }];

describe('vendor profile: ETags', () => {
  it.each(['Practitioner/pr-1001', 'Location/loc-2001', 'Schedule/sch-3001', 'Slot/sch-3001-20260309T1300Z'])(
    'answers a read of %s with W/"<versionId>"',
    async (path) => {
      const { base } = await startVendor();
      const read = await call(base, 'GET', path);
      expect(read.status).toBe(200);
      expect(read.etag).toBe(`W/"${read.body.meta?.versionId}"`);
    },
  );

  it('answers a create with its ETag, and no ETag on a search', async () => {
    const { base } = await startVendor();
    const created = await call(base, 'POST', 'Patient', { resourceType: 'Patient', name: [{ family: 'Lopez' }] });
    expect(created.etag).toBe(`W/"${created.body.meta?.versionId}"`);
    expect((await call(base, 'GET', 'Patient?name=Lopez')).etag).toBeNull();
  });
});

describe('vendor profile: If-Match', () => {
  it.each(['Patient', 'Appointment'])('refuses a PATCH of a %s without If-Match with 428, changing nothing, and counts it', async (type) => {
    const { base } = await startVendor();
    const id = type === 'Patient' ? await createPatient(base) : (await book(base, MONDAY_9AM)).id;
    const before = await call(base, 'GET', `${type}/${id}`);
    const answer = await call(base, 'PATCH', `${type}/${id}`, [{ op: 'add', path: '/language', value: 'en' }]);
    expect(answer.status).toBe(428);
    expect(answer.body.issue?.[0]?.code).toBe('required');
    expect(why(answer)).toMatch(/only under If-Match/);
    expect((await call(base, 'GET', `${type}/${id}`)).etag).toBe(before.etag);
    expect(await counters(base)).toMatchObject({ withoutIfMatch: 1, refused: { [`PATCH ${type}`]: 1 } });
  });

  it('refuses an If-Match that is not an entity tag with 400', async () => {
    const { base } = await startVendor();
    const id = await createPatient(base);
    const answer = await call(base, 'PATCH', `Patient/${id}`, activate, { 'if-match': 'version 1' });
    expect(answer.status).toBe(400);
    expect(why(answer)).toMatch(/one entity tag/);
  });

  it('answers 412 with the current ETag when the If-Match names a version that is no longer current', async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const first = await call(base, 'PATCH', `Appointment/${booked.id}`, [{ op: 'add', path: '/comment', value: 'first' }], { 'if-match': booked.etag });
    const stale = await call(base, 'PATCH', `Appointment/${booked.id}`, [{ op: 'add', path: '/comment', value: 'second' }], { 'if-match': booked.etag });
    expect(stale.status).toBe(412);
    expect(stale.body.issue?.[0]?.code).toBe('conflict');
    expect(why(stale)).toMatch('read it again');
    expect(stale.etag).toBe(first.etag);
    expect((await call(base, 'GET', `Appointment/${booked.id}`)).body.comment).toBe('first');
  });

  it('takes a PATCH under the current version: 200 with the record as written and a new ETag, which a read answers too', async () => {
    const { base } = await startVendor();
    const created = await call(base, 'POST', 'Patient', { resourceType: 'Patient', name: [{ family: 'Lopez' }] });
    const patched = await call(base, 'PATCH', `Patient/${created.body.id}`, activate, { 'if-match': created.etag! });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ active: true, name: [{ family: 'Lopez' }] });
    expect(patched.etag).toMatch(/^W\/".+"$/);
    expect(patched.etag).not.toBe(created.etag);
    expect((await call(base, 'GET', `Patient/${created.body.id}`)).etag).toBe(patched.etag);
  });

  it('takes the strong form of the entity tag too', async () => {
    const { base } = await startVendor();
    const created = await call(base, 'POST', 'Patient', { resourceType: 'Patient' });
    expect((await call(base, 'PATCH', `Patient/${created.body.id}`, activate, { 'if-match': `"${created.body.meta?.versionId}"` })).status).toBe(200);
  });

  it.each([
    ['a body that is not a patch', { active: true }, 400, /non-empty array/],
    ['a test that fails', [{ op: 'test', path: '/active', value: true }], 422, /does not apply.*test \/active/],
    ['a change of id', [{ op: 'replace', path: '/id', value: 'other' }], 422, /does not change resourceType or id/],
  ])('refuses %s, changing nothing', async (_what, body, status, reason) => {
    const { base } = await startVendor();
    const created = await call(base, 'POST', 'Patient', { resourceType: 'Patient' });
    const answer = await call(base, 'PATCH', `Patient/${created.body.id}`, body, { 'if-match': created.etag! });
    expect(answer.status).toBe(status);
    expect(why(answer)).toMatch(reason);
    expect((await call(base, 'GET', `Patient/${created.body.id}`)).etag).toBe(created.etag);
  });

  it('answers 404 for a PATCH of a record that does not exist', async () => {
    const { base } = await startVendor();
    expect((await call(base, 'PATCH', 'Patient/nobody', activate, { 'if-match': 'W/"1"' })).status).toBe(404);
  });
});
