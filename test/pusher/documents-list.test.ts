// GET /admin/documents: newest first, a page at a time (limit and cursor), filtered by status, document
// type and creation time, and every bad parameter refused by name.
import { describe, expect, it } from 'vitest';
import { PDF } from '../support/simulator-fixture.ts';
import { pusherAdminFixture } from './admin-fixture.ts';

const HOUR = 60 * 60 * 1000;

function fixture() {
  const { clock, pusher, get } = pusherAdminFixture();
  return {
    clock,
    pusher,
    /** Queues a document now, then moves the clock an hour on. */
    async add(externalId: string, documentType: 'lab_report' | 'prescription' = 'lab_report') {
      const request = {
        externalId,
        patientPhone: '+15550001111',
        patientName: 'Synthetic Patient',
        label: 'Blood count',
        file: { base64: PDF.toString('base64'), filename: 'r.pdf' },
      };
      const r = await pusher.enqueue(documentType, request);
      if (!r.ok) throw new Error(r.reason);
      clock.advance(HOUR);
    },
    get: (query: string) => get(`/documents${query}`),
  };
}

const ids = (body: { documents: { externalId: string }[] }) => body.documents.map((d) => d.externalId);

describe('listing documents', () => {
  it('pages newest first with limit and cursor, each document once, until nextCursor is null', async () => {
    const f = fixture();
    for (const id of ['d1', 'd2', 'd3', 'd4', 'd5']) await f.add(id);
    const seen: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await f.get(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(ids(res.body));
      cursor = res.body.nextCursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([['d5', 'd4'], ['d3', 'd2'], ['d1']]);
  });

  it('keeps documents made in the same millisecond apart across pages', async () => {
    const f = fixture();
    for (const id of ['a', 'b', 'c']) {
      await f.add(id);
      f.clock.advance(-HOUR);
    }
    const first = await f.get('?limit=2');
    const second = await f.get(`?limit=2&cursor=${first.body.nextCursor}`);
    expect([...ids(first.body), ...ids(second.body)]).toEqual(['c', 'b', 'a']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('filters by status, document type and creation time', async () => {
    const f = fixture();
    const start = f.clock.now();
    await f.add('lab-1');
    await f.add('rx-1', 'prescription');
    await f.add('lab-2');
    await f.pusher.outbox.recordOutcome('lab-2', { state: 'SENT' });
    expect(ids((await f.get('?type=prescription')).body)).toEqual(['rx-1']);
    expect(ids((await f.get('?status=SENT')).body)).toEqual(['lab-2']);
    expect(ids((await f.get('?status=queued&type=lab_report')).body)).toEqual(['lab-1']);
    const since = new Date(start + HOUR).toISOString();
    const until = new Date(start + 2 * HOUR).toISOString();
    expect(ids((await f.get(`?since=${since}&until=${until}`)).body)).toEqual(['rx-1']);
    expect(ids((await f.get(`?since=${since}`)).body)).toEqual(['lab-2', 'rx-1']);
  });

  it('shows identifiers and status, never the label or the patient', async () => {
    const f = fixture();
    await f.add('lab-1');
    const res = await f.get('');
    expect(res.body.documents[0]).toMatchObject({ externalId: 'lab-1', status: 'queued' });
    expect(JSON.stringify(res.body)).not.toMatch(/Blood count|Synthetic Patient|5550001111/);
  });

  it.each([
    ['status=LOST', 'status'],
    ['type=invoice', 'type'],
    ['limit=1000', 'limit'],
    ['cursor=abc', 'cursor'],
    ['since=15/01/2026', 'since'],
    ['sort=asc', 'sort'],
  ])('refuses %s naming %s', async (query, field) => {
    const res = await fixture().get(`?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
  });
});
