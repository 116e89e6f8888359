// A document's history, on both engines: queued or REJECTED when it entered the outbox, each failed send with
// its attempt and error code, the service's answers (a repeated answer, or one to a final row, adds nothing),
// a person's retry, the EMR's changes to a REJECTED one, and the history pruned with its document.
import { describe, expect, it } from 'vitest';
import type { DocumentHistoryEntry } from '../../src/storage/documents.ts';
import { apiDocument, documentEngines, emrDocument, request, withDocuments } from './documents-engines.ts';

const LEASE = 60_000;
const HOUR = 60 * 60 * 1000;
const steps = (h: DocumentHistoryEntry[]) => h.map((s) => [s.status, s.attempt, s.detail]);

describe.each(documentEngines)('document history on $name', (engine) => {
  it('starts when the document enters, queued or REJECTED with its code, once per externalId', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      await documents.enqueue(apiDocument('lab-1'));
      await documents.enqueue(emrDocument('dr-1', { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } }));
      expect(await documents.history('lab-1')).toEqual([{ at: clock.now(), status: 'queued', attempt: null, detail: null }]);
      expect(steps(await documents.history('dr-1'))).toEqual([['REJECTED', null, 'unsupported_file_type']]);
      expect(await documents.history('nope')).toEqual([]);
    });
  });

  it("records each failed send with its attempt and code, then the service's answers as they change", async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      const [first] = await documents.settle([], 1, LEASE);
      clock.advance(1_000);
      const retry = { at: clock.now() + 5_000, code: 'service_unreachable', reason: 'timeout' };
      await documents.settle([{ externalId: 'lab-1', leaseUntil: first!.lease_until!, retry }], 0, LEASE);
      clock.advance(5_000);
      await documents.settle([], 1, LEASE);
      await documents.recordOutcome('lab-1', { state: 'HELD', reason: 'quiet hours', nextPollAt: clock.now() + HOUR });
      await documents.recordOutcome('lab-1', { state: 'HELD', reason: 'quiet hours', nextPollAt: clock.now() + 2 * HOUR });
      clock.advance(HOUR);
      await documents.recordOutcome('lab-1', { state: 'SENT' });
      await documents.recordOutcome('lab-1', { state: 'FAILED', code: 'retries_exhausted', reason: 'late' });
      const history = await documents.history('lab-1');
      expect(steps(history)).toEqual([
        ['queued', null, null],
        ['retrying', 1, 'service_unreachable'],
        ['HELD', 2, 'quiet hours'],
        ['SENT', 2, null],
      ]);
      expect(history.map((h) => h.at)).toEqual([0, 1_000, 6_000, 6_000 + HOUR].map((d) => history[0]!.at + d));
    });
  });

  it('records no retry whose lease was taken since', async () => {
    await withDocuments(engine, async ({ documents, clock }) => {
      await documents.enqueue(apiDocument('lab-1'));
      const [first] = await documents.claimDue(1, 1_000);
      clock.advance(1_000);
      await documents.claimDue(1, LEASE);
      await documents.settle([{ externalId: 'lab-1', leaseUntil: first!.lease_until!, retry: { at: clock.now(), code: 'x', reason: 'y' } }], 0, LEASE);
      expect(steps(await documents.history('lab-1'))).toEqual([['queued', null, null]]);
    });
  });

  it("records a person's retry of a document that failed here, and nothing for one that cannot be retried", async () => {
    await withDocuments(engine, async ({ documents }) => {
      await documents.enqueue(apiDocument('here'));
      await documents.enqueue(apiDocument('there'));
      await documents.recordOutcome('here', { state: 'FAILED', code: 'retries_exhausted', reason: 'gave up' });
      await documents.recordOutcome('there', { state: 'FAILED', reason: 'no messaging account' });
      expect(await documents.resend('here')).toBe(true);
      expect(await documents.resend('there')).toBe(false);
      expect(steps(await documents.history('here'))).toEqual([
        ['queued', null, null],
        ['FAILED', 0, 'retries_exhausted'],
        ['retried', null, null],
      ]);
      expect(steps(await documents.history('there'))).toEqual([
        ['queued', null, null],
        ['FAILED', 0, 'no messaging account'],
      ]);
    });
  });

  it('records what the EMR scan changed of a REJECTED document, and nothing of one that moved on', async () => {
    await withDocuments(engine, async ({ documents }) => {
      const refused = { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } };
      await documents.enqueue(emrDocument('fixed', refused));
      await documents.enqueue(emrDocument('still-bad', refused));
      await documents.enqueue(emrDocument('sent'));
      await documents.fileScanned([
        { kind: 'requeue', externalId: 'fixed', request: request('fixed'), version: '2' },
        { kind: 'rejection', externalId: 'still-bad', code: 'file_too_large', reason: 'over 15 MB', version: '2' },
        { kind: 'requeue', externalId: 'sent', request: request('sent'), version: '2' },
      ]);
      expect(steps(await documents.history('fixed'))).toEqual([
        ['REJECTED', null, 'unsupported_file_type'],
        ['queued', null, 'changed in the EMR'],
      ]);
      expect(steps(await documents.history('still-bad'))).toEqual([
        ['REJECTED', null, 'unsupported_file_type'],
        ['REJECTED', null, 'file_too_large'],
      ]);
      expect(steps(await documents.history('sent'))).toEqual([['queued', null, null]]);
    });
  });

  it('prunes the history with its document, and keeps the history of those that stay', async () => {
    await withDocuments(engine, async ({ documents, clock, query }) => {
      await documents.enqueue(apiDocument('old'));
      await documents.enqueue(apiDocument('open'));
      await documents.recordOutcome('old', { state: 'SENT' });
      clock.advance(HOUR);
      expect(await documents.pruneFinished(clock.now())).toBe(1);
      expect(await documents.history('old')).toEqual([]);
      const left = await query<{ external_id: string }>('SELECT DISTINCT external_id FROM document_history');
      expect(left.map((r) => r.external_id)).toEqual(['open']);
    });
  });
});
