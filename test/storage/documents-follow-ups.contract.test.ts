// The document store's other sides, on both engines: HELD rows to poll in poll order, statuses to write back
// (a row that changed since its read stays unsynced), the EMR scan's watermark and filings in one
// transaction, events for documents it never had (once per eventId), what admins and metrics read (pages
// newest first, filters, the oldest queued, open rows, counts by status), and retention of finished rows.
import { describe, expect, it } from 'vitest';
import { apiDocument, documentEngines, emrDocument, request, withDocuments } from './documents-engines.ts';

const HOUR = 60 * 60 * 1000;

describe.each(documentEngines)('the document store on $name: follow-ups', (engine) => {
  it('gives the HELD rows due for a poll, in poll order, and takes their next poll', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      for (const id of ['late', 'early', 'later']) await documents.enqueue(apiDocument(id));
      await documents.recordOutcome('late', { state: 'HELD', nextPollAt: clock.now() + 2_000 });
      await documents.recordOutcome('early', { state: 'HELD', nextPollAt: clock.now() + 1_000 });
      await documents.recordOutcome('later', { state: 'HELD', nextPollAt: clock.now() + 9_000 });
      clock.advance(2_000);
      expect((await documents.heldDue(10)).map((r) => r.external_id)).toEqual(['early', 'late']);
      await documents.pollAgainAt('early', clock.now() + 60_000);
      expect((await documents.heldDue(10)).map((r) => r.external_id)).toEqual(['late']);
    });
  });

  it('gives the statuses not yet in the EMR, oldest first, and leaves a row that changed since it was read', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(emrDocument('dr-1'));
      await documents.enqueue(emrDocument('dr-2'));
      await documents.enqueue(apiDocument('api-1'));
      await documents.recordOutcome('dr-1', { state: 'HELD', nextPollAt: clock.now() + HOUR });
      clock.advance(1_000);
      await documents.recordOutcome('dr-2', { state: 'SENT' });
      await documents.recordOutcome('api-1', { state: 'SENT' });
      const unsynced = await documents.unsynced(10);
      expect(unsynced.map((r) => r.external_id)).toEqual(['dr-1', 'dr-2']);
      clock.advance(1_000);
      await documents.recordOutcome('dr-1', { state: 'SENT' }); // moved on after it was read
      await documents.markAllSynced(unsynced);
      expect((await documents.unsynced(10)).map((r) => r.external_id)).toEqual(['dr-1']);
      await documents.markSynced((await documents.get('dr-1'))!);
      expect(await documents.unsynced(10)).toEqual([]);
    });
  });

  it('keeps an event for a document it never had, once per eventId', async () => {
    await withDocuments(engine, async ({ documents, query }) => {
      const event = { eventId: 'evt-1', externalId: 'unknown', status: 'SENT', occurredAt: '2026-01-15T12:00:00.000Z' };
      await documents.recordUnmatchedEvent(event);
      await documents.recordUnmatchedEvent(event);
      expect(await query('SELECT event_id, external_id FROM unmatched_document_events')).toEqual([{ event_id: 'evt-1', external_id: 'unknown' }]);
    });
  });
});

describe.each(documentEngines)('the document store on $name: the EMR scan', (engine) => {
  it('files new documents with the watermark in one go, and says which ones it added', async () => {
    await withDocuments(engine, async ({ documents }) => {
      expect(await documents.scanWatermark()).toBeUndefined();
      await documents.enqueue(apiDocument('dr-2'));
      const changed = await documents.fileScanned(
        [
          { kind: 'new', document: emrDocument('dr-1') },
          { kind: 'new', document: emrDocument('dr-2') },
        ],
        '2026-01-15T09:00:00.000Z',
      );
      expect(changed).toEqual([true, false]);
      expect(await documents.scanWatermark()).toBe('2026-01-15T09:00:00.000Z');
      expect(await documents.get('dr-1')).toMatchObject({ state: 'queued', source: 'emr', emr_version: '1' });
    });
  });

  it('queues again a REJECTED document the EMR changed, or records its new rejection; never a row that moved on', async () => {
    await withDocuments(engine, async ({ documents }) => {
      const refused = { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } };
      await documents.enqueue(emrDocument('fixed', refused));
      await documents.enqueue(emrDocument('still-bad', refused));
      await documents.enqueue(emrDocument('sent'));
      const changed = await documents.fileScanned([
        { kind: 'requeue', externalId: 'fixed', request: request('fixed'), version: '2' },
        { kind: 'rejection', externalId: 'still-bad', code: 'file_too_large', reason: 'over 15 MB', version: '2' },
        { kind: 'requeue', externalId: 'sent', request: request('sent'), version: '2' },
      ]);
      expect(changed).toEqual([true, true, false]);
      expect(await documents.get('fixed')).toMatchObject({ state: 'queued', emr_version: '2', error_code: null, attempts: 0, emr_synced: 1 });
      expect(JSON.parse((await documents.get('fixed'))!.request!)).toEqual(request('fixed'));
      expect(await documents.get('still-bad')).toMatchObject({ state: 'REJECTED', error_code: 'file_too_large', emr_version: '2', emr_synced: 0 });
      expect(await documents.get('sent')).toMatchObject({ emr_version: '1' });
      expect(await documents.scanWatermark()).toBeUndefined();
    });
  });
});

describe.each(documentEngines)('the document store on $name: views', (engine) => {
  it('pages newest first with a position, each row once, filtered by status, type and creation time', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      const start = clock.now();
      for (const id of ['d1', 'd2', 'd3', 'd4']) {
        await documents.enqueue(apiDocument(id, id === 'd2' ? { documentType: 'prescription' } : {}));
        clock.advance(HOUR);
      }
      await documents.recordOutcome('d3', { state: 'SENT' });
      const first = await documents.page({ limit: 3 });
      expect(first.rows.map((r) => r.external_id)).toEqual(['d4', 'd3', 'd2']);
      const second = await documents.page({ limit: 3, after: first.next! });
      expect(second).toMatchObject({ next: null });
      expect(second.rows.map((r) => r.external_id)).toEqual(['d1']);
      expect((await documents.page({ limit: 10, status: 'SENT' })).rows.map((r) => r.external_id)).toEqual(['d3']);
      expect((await documents.page({ limit: 10, type: 'prescription' })).rows.map((r) => r.external_id)).toEqual(['d2']);
      const window = await documents.page({ limit: 10, since: start + HOUR, until: start + 3 * HOUR });
      expect(window.rows.map((r) => r.external_id)).toEqual(['d3', 'd2']);
      expect((await documents.list('queued')).map((r) => r.external_id)).toEqual(['d4', 'd2', 'd1']);
    });
  });

  it('reads the oldest queued document, the open rows and the count by status', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      expect(await documents.oldestQueuedCreatedAt()).toBeUndefined();
      const first = clock.now();
      await documents.enqueue(apiDocument('sent'));
      clock.advance(1_000);
      await documents.enqueue(apiDocument('queued'));
      await documents.enqueue(emrDocument('held'));
      await documents.recordOutcome('sent', { state: 'SENT' });
      await documents.recordOutcome('held', { state: 'HELD', nextPollAt: clock.now() + HOUR });
      expect(await documents.oldestQueuedCreatedAt()).toBe(first + 1_000);
      expect(await documents.openCount()).toBe(2);
      const counts = (await documents.countByState()).sort((a, b) => (a.state < b.state ? -1 : 1));
      expect(counts).toEqual([
        { state: 'HELD', count: 1 },
        { state: 'SENT', count: 1 },
        { state: 'queued', count: 1 },
      ]);
    });
  });
});

describe.each(documentEngines)('the document store on $name: retention', (engine) => {
  it('prunes finished rows whose status reached the EMR before the cutoff, and keeps every other', async () => {
    await withDocuments(engine, async ({ documents, clock, query }) => {
      const ids = ['sent', 'suppressed', 'failed-by-service', 'rejected', 'queued', 'held', 'failed-here', 'sent-unsynced', 'sent-recently'];
      for (const id of ids) {
        const fromEmr = id === 'sent-unsynced' || id === 'rejected';
        await documents.enqueue(
          fromEmr
            ? emrDocument(id, id === 'rejected' ? { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } } : {})
            : apiDocument(id),
        );
      }
      await documents.markSynced((await documents.get('rejected'))!);
      await documents.recordOutcome('sent', { state: 'SENT' });
      await documents.recordOutcome('suppressed', { state: 'SUPPRESSED' });
      await documents.recordOutcome('failed-by-service', { state: 'FAILED', reason: 'undeliverable' });
      await documents.recordOutcome('held', { state: 'HELD', nextPollAt: clock.now() + 1_000 });
      await documents.recordOutcome('failed-here', { state: 'FAILED', code: 'unauthorized', reason: 'key refused' });
      await documents.recordOutcome('sent-unsynced', { state: 'SENT' });
      const cutoff = clock.now() + 1;
      clock.advance(HOUR);
      await documents.recordOutcome('sent-recently', { state: 'SENT' });
      expect(await documents.pruneFinished(cutoff)).toBe(4);
      const left = await query<{ external_id: string }>('SELECT external_id FROM outbox_documents ORDER BY external_id');
      expect(left.map((r) => r.external_id)).toEqual(['failed-here', 'held', 'queued', 'sent-recently', 'sent-unsynced']);
    });
  });
});
