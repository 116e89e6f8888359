// Retention of the document outbox, run by the processor's hourly pass: finished document rows (final at
// the service or REJECTED, and written back to the EMR) go after RETENTION_EVENT_ID_DAYS; rows still
// queued, HELD, failed here or unsynced stay however old they are. (The mapping outbox's: test/mappings/.)
import { describe, expect, it } from 'vitest';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { processorFixture } from '../support/processor-fixture.ts';
import { PDF } from '../support/simulator-fixture.ts';

const DAY = 24 * 60 * 60 * 1000;

const request = (externalId: string) => ({
  externalId,
  patientPhone: '+15550001111',
  patientName: 'Synthetic Patient',
  label: 'Blood count',
  file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
});

describe('outbox retention', () => {
  it('prunes finished, synced documents past the retention and keeps every unfinished one', async () => {
    const f = processorFixture({ RETENTION_EVENT_ID_DAYS: '30' });
    const outbox = createSqliteDocumentStore(f.db, f.clock);
    const add = (id: string, emrDocumentId?: string) =>
      outbox.enqueue({
        externalId: id,
        documentType: 'lab_report',
        source: emrDocumentId ? 'emr' : 'api',
        request: request(id),
        ...(emrDocumentId ? { emrDocumentId } : {}),
      });
    for (const id of ['sent', 'suppressed', 'failed-by-service', 'queued', 'held', 'failed-here', 'sent-unsynced', 'sent-recently'])
      await add(id, id === 'sent-unsynced' ? 'DocumentReference/1' : undefined);
    await outbox.enqueue({
      externalId: 'rejected',
      documentType: 'lab_report',
      source: 'emr',
      emrDocumentId: 'DocumentReference/2',
      rejected: { code: 'unsupported_file_type', reason: 'GIF' },
    });
    await outbox.markSynced((await outbox.get('rejected'))!);
    await outbox.recordOutcome('sent', { state: 'SENT' });
    await outbox.recordOutcome('suppressed', { state: 'SUPPRESSED' });
    await outbox.recordOutcome('failed-by-service', { state: 'FAILED', reason: 'undeliverable' });
    await outbox.recordOutcome('held', { state: 'HELD', nextPollAt: f.clock.now() + 1000 });
    await outbox.recordOutcome('failed-here', { state: 'FAILED', code: 'unauthorized', reason: 'key refused' });
    await outbox.recordOutcome('sent-unsynced', { state: 'SENT' });

    f.clock.advance(31 * DAY);
    await outbox.recordOutcome('sent-recently', { state: 'SENT' });
    await f.processor.runOnce();

    const left = f.db.prepare('SELECT external_id FROM outbox_documents ORDER BY external_id').pluck().all() as string[];
    expect(left).toEqual(['failed-here', 'held', 'queued', 'sent-recently', 'sent-unsynced']);
  });
});
