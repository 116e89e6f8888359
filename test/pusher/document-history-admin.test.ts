// GET /admin/documents/:externalId with its history: every status the document went through, oldest first,
// an operator's retry among them, with codes and attempts but never the document's label, patient or bytes.
import { describe, expect, it } from 'vitest';
import { PDF } from '../support/simulator-fixture.ts';
import { pusherAdminFixture as fixture } from './admin-fixture.ts';

describe('a document with its history', () => {
  it('shows every status from the push to an operator retry, with codes and attempts, oldest first', async () => {
    const f = fixture();
    const t0 = f.clock.now();
    const pushed = await f.pusher.enqueue('lab_report', {
      externalId: 'lab-1',
      patientPhone: '+15550001111',
      patientName: 'Synthetic Patient',
      label: 'Blood count',
      file: { base64: PDF.toString('base64'), filename: 'r.pdf' },
    });
    expect(pushed.ok).toBe(true);
    f.clock.advance(1_000);
    await f.pusher.outbox.recordOutcome('lab-1', { state: 'FAILED', code: 'retries_exhausted', reason: 'the service did not answer' });
    f.clock.advance(1_000);
    expect((await f.post('/documents/lab-1/retry')).status).toBe(200);

    const res = await f.get('/documents/lab-1');
    expect(res.status).toBe(200);
    expect(res.body.document).toMatchObject({ externalId: 'lab-1', status: 'queued' });
    expect(res.body.history).toEqual([
      { at: new Date(t0).toISOString(), status: 'queued' },
      { at: new Date(t0 + 1_000).toISOString(), status: 'FAILED', attempt: 0, detail: 'retries_exhausted' },
      { at: new Date(t0 + 2_000).toISOString(), status: 'retried' },
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/Synthetic Patient|Blood count|15550001111/);
  });

  it('answers 404 for a document it does not have', async () => {
    const f = fixture();
    expect((await f.get('/documents/nope')).status).toBe(404);
  });
});
