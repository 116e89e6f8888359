// GET /admin/documents and /admin/documents/:externalId show the size and SHA-256 of a document's file, kept
// once it is SENT and its bytes are removed; none for a file given by URL.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PDF } from '../support/simulator-fixture.ts';
import { pusherAdminFixture as fixture } from './admin-fixture.ts';

const request = (file: Record<string, string>) => ({
  externalId: 'lab-1',
  patientPhone: '+15550001111',
  patientName: 'Synthetic Patient',
  label: 'Blood count',
  file: { filename: 'r.pdf', ...file },
});

describe("a document's file in the admin API", () => {
  it('shows its size and SHA-256 once the document is SENT and its request is removed', async () => {
    const f = fixture();
    expect((await f.pusher.enqueue('lab_report', request({ base64: PDF.toString('base64') }))).ok).toBe(true);
    await f.pusher.outbox.recordOutcome('lab-1', { state: 'SENT' });
    expect((await f.pusher.outbox.get('lab-1'))!.request).toBeNull();
    const file = { documentSize: PDF.length, documentSha256: createHash('sha256').update(PDF).digest('hex') };
    expect((await f.get('/documents/lab-1')).body.document).toMatchObject({ status: 'SENT', ...file });
    expect((await f.get('/documents')).body.documents).toMatchObject([{ externalId: 'lab-1', ...file }]);
  });

  it('shows neither for a file given by URL', async () => {
    const f = fixture();
    expect((await f.pusher.enqueue('lab_report', request({ url: 'https://lab.example/r.pdf' }))).ok).toBe(true);
    const { document } = (await f.get('/documents/lab-1')).body;
    expect(document).not.toHaveProperty('documentSize');
    expect(document).not.toHaveProperty('documentSha256');
  });
});
