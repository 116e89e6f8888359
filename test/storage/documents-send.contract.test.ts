// The document store's send side, on both engines: one row per externalId (also when two replicas enqueue the
// same document at once), claims that never hand one document to two claimers and never take a live lease
// (one that ran out is taken over), settle recording what ended and claiming the next in one go, retries and
// give-backs that never touch a lease taken since, final states that never move, requests handed back to
// send, and what a restart frees (SQLite: every lease; PostgreSQL: none).
import { describe, expect, it } from 'vitest';
import type { ClaimedRow } from '../../src/storage/documents.ts';
import { apiDocument, documentEngines, request, withDocuments } from './documents-engines.ts';

const LEASE = 60_000;
const ids = (rows: readonly { external_id: string }[]) => rows.map((r) => r.external_id).sort();

describe.each(documentEngines)('the document store on $name: enqueue', (engine) => {
  it('makes one row per externalId: a second enqueue returns the first row, created false', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      const first = await documents.enqueue(apiDocument('lab-1'));
      expect(first.created).toBe(true);
      expect(first.row).toMatchObject({ state: 'queued', attempts: 0, lease_until: clock.now(), next_attempt_at: clock.now() });
      expect(JSON.parse(first.row.request!)).toEqual(request('lab-1'));
      const second = await documents.enqueue(apiDocument('lab-1', { request: request('lab-1', 'changed') }));
      expect(second.created).toBe(false);
      expect(JSON.parse(second.row.request!).label).toBe('Blood count');
    });
  });

  it('keeps a document the checks refused as REJECTED, without a request, its status due at the EMR', async () => {
    await withDocuments(engine, async ({ documents }) => {
      const { row } = await documents.enqueue(
        apiDocument('dr-1', { source: 'emr', emrDocumentId: 'dr-1', request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } }),
      );
      expect(row).toMatchObject({ state: 'REJECTED', request: null, error_code: 'unsupported_file_type', emr_synced: 0 });
    });
  });
});

describe.each(documentEngines)('the document store on $name: claims', (engine) => {
  it('claims due rows with a lease that is also their next attempt, counting an attempt', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      const [claimed] = await documents.claimDue(5, LEASE);
      expect(claimed).toMatchObject({ external_id: 'lab-1', attempts: 1, lease_until: clock.now() + LEASE, next_attempt_at: clock.now() + LEASE });
      expect(await documents.get('lab-1')).toMatchObject({ attempts: 1, lease_until: clock.now() + LEASE });
      expect(await documents.anyDue()).toBe(false);
    });
  });

  it('never takes a live lease, and takes over one that ran out', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      await documents.claimDue(5, LEASE);
      clock.advance(LEASE - 1);
      expect(await documents.claimDue(5, LEASE)).toEqual([]);
      clock.advance(1);
      expect(await documents.anyDue()).toBe(true);
      const [taken] = await documents.claimDue(5, LEASE);
      expect(taken).toMatchObject({ external_id: 'lab-1', attempts: 2, lease_until: clock.now() + LEASE });
    });
  });

  it('never hands one document to two claimers', async () => {
    await withDocuments(engine, async (e) => {
      const other = e.replica();
      for (let i = 0; i < 30; i++) await e.documents.enqueue(apiDocument(`lab-${String(i).padStart(2, '0')}`));
      const claimedBy = async (store: typeof other) => {
        const mine: ClaimedRow[] = [];
        for (let batch = await store.settle([], 3, LEASE); batch.length; batch = await store.settle([], 3, LEASE)) mine.push(...batch);
        return mine;
      };
      const [a, b] = await Promise.all([claimedBy(e.documents), claimedBy(other)]);
      const all = [...ids(a), ...ids(b)].sort();
      expect(all).toEqual(Array.from({ length: 30 }, (_, i) => `lab-${String(i).padStart(2, '0')}`));
      expect(new Set(all).size).toBe(30);
    });
  });
});

describe.each(documentEngines)('the document store on $name: settle', (engine) => {
  it('records outcomes, retries and give-backs, then claims the next rows, without their request', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      for (const id of ['a', 'b', 'c', 'd', 'e']) await documents.enqueue(apiDocument(id));
      const first = await documents.settle([], 3, LEASE);
      expect(ids(first)).toEqual(['a', 'b', 'c']);
      const lease = clock.now() + LEASE;
      clock.advance(1_000);
      const next = await documents.settle(
        [
          {
            externalId: 'a',
            outcome: {
              state: 'SENT',
              resource: {
                type: 'document',
                action: 'received',
                documentType: 'lab_report',
                externalId: 'a',
                serviceId: 'doc_a',
                patientServiceId: 'pat_1',
                status: 'SENT',
                sentAt: '2026-01-15T10:00:00.000Z',
              },
            },
          },
          { externalId: 'b', leaseUntil: lease, retry: { at: clock.now() + 5_000, code: 'service_unreachable', reason: 'timeout' } },
          { externalId: 'c', leaseUntil: lease, unsent: true },
        ],
        10,
        LEASE,
      );
      // c was given back (due at once, its attempt not counted) and is claimed again with d and e.
      expect(ids(next)).toEqual(['c', 'd', 'e']);
      expect(next.every((r) => !('request' in r))).toBe(true);
      expect(next.find((r) => r.external_id === 'c')).toMatchObject({ attempts: 1, lease_until: clock.now() + LEASE });
      expect(await documents.get('a')).toMatchObject({
        state: 'SENT',
        service_id: 'doc_a',
        sent_at: '2026-01-15T10:00:00.000Z',
        request: null,
        lease_until: null,
      });
      expect(await documents.get('b')).toMatchObject({
        state: 'queued',
        next_attempt_at: clock.now() + 5_000,
        lease_until: null,
        error_code: 'service_unreachable',
      });
      expect(await documents.requestOf('d')).toEqual(request('d'));
    });
  });

  it('leaves a lease taken since as it is: a retry or give-back names the lease it was claimed with', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      const [first] = await documents.claimDue(1, 1_000);
      clock.advance(1_000);
      const [second] = await documents.claimDue(1, LEASE);
      const retry = { at: clock.now() + 5_000, code: 'service_unreachable', reason: 'timeout' };
      await documents.settle([{ externalId: 'lab-1', leaseUntil: first!.lease_until!, retry }], 0, LEASE);
      await documents.settle([{ externalId: 'lab-1', leaseUntil: first!.lease_until!, unsent: true }], 0, LEASE);
      expect(await documents.get('lab-1')).toMatchObject({ lease_until: second!.lease_until, attempts: 2, error_code: null });
    });
  });
});

describe.each(documentEngines)('the document store on $name: statuses', (engine) => {
  it('never moves a final row again', async () => {
    await withDocuments(engine, async ({ documents }) => {
      await documents.enqueue(apiDocument('lab-1'));
      await documents.recordOutcome('lab-1', { state: 'SENT' });
      await documents.recordOutcome('lab-1', { state: 'HELD', nextPollAt: 1 });
      await documents.recordOutcome('lab-1', { state: 'FAILED', code: 'retries_exhausted', reason: 'gave up' });
      expect(await documents.get('lab-1')).toMatchObject({ state: 'SENT', error_code: null, next_poll_at: null });
    });
  });

  it('keeps the request of a document that failed here, and queues it again on a resend; never a final one', async () => {
    await withDocuments(engine, async ({ documents }) => {
      await documents.enqueue(apiDocument('here'));
      await documents.enqueue(apiDocument('there'));
      await documents.recordOutcome('here', { state: 'FAILED', code: 'retries_exhausted', reason: 'gave up' });
      await documents.recordOutcome('there', { state: 'FAILED', reason: 'no messaging account' });
      expect((await documents.get('here'))!.request).not.toBeNull();
      expect(await documents.resend('here')).toBe(true);
      expect(await documents.get('here')).toMatchObject({ state: 'queued', attempts: 0, error_code: null });
      expect(await documents.resend('there')).toBe(false);
      expect(await documents.resend('nope')).toBe(false);
    });
  });

  it('hands back a request enqueued here as it was enqueued, without reading the row', async () => {
    await withDocuments(engine, async ({ documents }) => {
      const checked = request('lab-1');
      await documents.enqueue(apiDocument('lab-1', { request: checked }));
      expect(await documents.requestOf('lab-1')).toBe(checked);
    });
  });

  it('reads the request of a row enqueued elsewhere, and finds none once the row is final', async () => {
    await withDocuments(engine, async (e) => {
      await e.documents.enqueue(apiDocument('lab-1'));
      await e.documents.enqueue(apiDocument('lab-2'));
      // Another replica (or this one after a restart) reads the row.
      const other = e.replica();
      expect(await other.requestOf('lab-1')).toEqual(request('lab-1'));
      await e.documents.recordOutcome('lab-2', { state: 'SENT' });
      expect(await other.requestOf('lab-2')).toBeNull();
    });
  });
});

describe.each(documentEngines)('the document store on $name: a restart', (engine) => {
  it('frees every live lease where one process owns the database, and none where replicas share it', async () => {
    await withDocuments(engine, async ({ name, documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      await documents.claimDue(1, LEASE);
      const released = await documents.releaseLeases();
      if (name === 'sqlite') {
        expect(released).toBe(1);
        expect(await documents.get('lab-1')).toMatchObject({ lease_until: clock.now(), next_attempt_at: clock.now() });
      } else {
        // Another replica may be alive and sending it: its lease runs out first.
        expect(released).toBe(0);
        expect(await documents.get('lab-1')).toMatchObject({ lease_until: clock.now() + LEASE });
      }
    });
  });
});

describe.each(documentEngines.filter((e) => e.name === 'postgres'))('the document store on $name, two replicas', (engine) => {
  it('enqueueing the same documents at once makes one row each, one of the two created', async () => {
    await withDocuments(engine, async (e) => {
      const other = e.replica();
      const docs = Array.from({ length: 20 }, (_, i) => `same-${i}`);
      const results = await Promise.all(docs.flatMap((id) => [e.documents.enqueue(apiDocument(id)), other.enqueue(apiDocument(id))]));
      for (let i = 0; i < docs.length; i++) {
        const pair = [results[2 * i]!, results[2 * i + 1]!];
        expect(pair.filter((r) => r.created)).toHaveLength(1);
        expect(pair.map((r) => r.row.external_id)).toEqual([docs[i], docs[i]]);
      }
      expect(await e.query<{ n: number }>('SELECT count(*) AS n FROM outbox_documents')).toEqual([{ n: 20 }]);
    });
  });
});
