// The pusher with a manual clock and a scripted service: local checks, retry classes (5xx, 429 with
// Retry-After, timeouts, permanent 4xx), one row per externalId, HELD follow-up timing, events, the
// write-back to the EMR, and the EMR scan.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import type { DocumentResource } from '../../src/contract/documents.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import supertest from 'supertest';
import { createApp } from '../../src/app/app.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createDocumentEventSink, createPusher, createPusherAdminRouter, type Pusher } from '../../src/pusher/index.ts';
import { ServiceCallError } from '../../src/service-client/errors.ts';
import { captureLogger } from '../support/log-capture.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { openTestDatabase, sqlitePusherStores } from './sqlite-stores.ts';

type Answer = DocumentResource | ServiceCallError;

function fixture(answers: Answer[] = []) {
  const db = openTestDatabase();
  const clock = createManualClock();
  const stores = sqlitePusherStores(db, clock);
  const emr = createMemoryEmr();
  const posts: string[] = [];
  let lookups: Answer[] = [];
  const log = captureLogger();
  const pusher = createPusher({
    ...stores,
    clock,
    logger: log.logger,
    emr,
    random: () => 0.5,
    config: parseConfig({ PUSHER_BACKOFF_BASE_MS: '1000', PUSHER_BACKOFF_MAX_MS: '8000', PUSHER_MAX_ATTEMPTS: '4', PUSHER_HELD_POLL_SECONDS: '300' }),
    serviceClient: {
      async postDocument(_type, body) {
        posts.push(body.externalId);
        const a = answers.shift() ?? resource({ externalId: body.externalId });
        if (a instanceof Error) throw a;
        return { httpStatus: 201, replayed: posts.filter((p) => p === body.externalId).length > 1, resource: a };
      },
      async getDocument() {
        const a = lookups.shift();
        if (a instanceof Error) throw a;
        return a;
      },
    },
  });
  const sink = createDocumentEventSink({ documents: stores.documents, coordination: stores.coordination, logger: silentLogger() });
  return {
    db,
    clock,
    emr,
    pusher,
    posts,
    sink,
    logLines: log.lines,
    setLookups: (l: Answer[]) => (lookups = l),
    row: async (id: string) => (await pusher.outbox.get(id))!,
  };
}

function resource(o: Partial<DocumentResource> = {}): DocumentResource {
  return {
    type: 'document',
    documentType: 'lab_report',
    serviceId: 'doc_1',
    externalId: 'lab-1',
    patientServiceId: 'pat_1',
    status: 'SENT',
    sentAt: '2026-01-15T10:00:00.000Z',
    action: 'received',
    ...o,
  };
}

const request = (o: Record<string, unknown> = {}) => ({
  externalId: 'lab-1',
  patientPhone: '+15550001111',
  patientName: 'Synthetic Patient',
  label: 'Blood count',
  file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
  ...o,
});

describe('checks before anything leaves', () => {
  it.each([
    [
      'bytes that are not PDF, JPEG or PNG',
      { file: { base64: Buffer.from('GIF89a-not-allowed').toString('base64'), filename: 'x.pdf' } },
      'unsupported_file_type',
    ],
    ['a file over 15 MB', { file: { base64: Buffer.alloc(15 * 1024 * 1024 + 1, 0x25).toString('base64'), filename: 'big.pdf' } }, 'file_too_large'],
    ['a URL that is not https', { file: { url: 'http://lab.example/r.pdf', filename: 'r.pdf' } }, 'file_url_rejected'],
    ['no filename', { file: { base64: PDF.toString('base64') } }, 'invalid_request'],
    ['no way to identify the patient', { patientPhone: undefined, patientName: undefined }, 'patient_unresolvable'],
  ])('refuses %s with its code, sending nothing', async (_l, overrides, code) => {
    const f = fixture();
    const result = await f.pusher.enqueue('lab_report', request(overrides));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.code).toBe(code);
    await f.pusher.runOnce();
    expect(f.posts).toEqual([]);
  });

  it('infers the mimeType from the filename', async () => {
    const f = fixture();
    await f.pusher.enqueue('lab_report', request());
    expect(JSON.parse((await f.row('lab-1')).request!).file.mimeType).toBe('application/pdf');
  });
});

describe('sending', () => {
  it('keeps one row per externalId: a second enqueue returns the first', async () => {
    const f = fixture();
    expect(await f.pusher.enqueue('lab_report', request())).toMatchObject({ ok: true, created: true });
    expect(await f.pusher.enqueue('lab_report', request({ label: 'changed' }))).toMatchObject({ ok: true, created: false });
    await f.pusher.runOnce();
    expect(f.posts).toEqual(['lab-1']);
    expect(await f.row('lab-1')).toMatchObject({ state: 'SENT', sent_at: '2026-01-15T10:00:00.000Z', request: null });
  });

  it('retries 5xx and timeouts with capped backoff, and honours a longer Retry-After on 429', async () => {
    const f = fixture([
      new ServiceCallError({ code: 'internal', message: '500', retryable: true }, 500),
      new ServiceCallError({ code: 'service_unreachable', message: 'timeout', retryable: true }),
      new ServiceCallError({ code: 'rate_limited', message: 'slow down', retryable: true }, 429, 30_000),
    ]);
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    expect((await f.row('lab-1')).next_attempt_at - f.clock.now()).toBe(750);
    f.clock.advance(750);
    await f.pusher.runOnce();
    expect((await f.row('lab-1')).next_attempt_at - f.clock.now()).toBe(1500);
    f.clock.advance(1500);
    await f.pusher.runOnce();
    expect((await f.row('lab-1')).next_attempt_at - f.clock.now()).toBe(30_000);
    f.clock.advance(29_999);
    await f.pusher.runOnce();
    expect(f.posts).toHaveLength(3);
    f.clock.advance(1);
    await f.pusher.runOnce();
    expect(f.posts).toEqual(['lab-1', 'lab-1', 'lab-1', 'lab-1']);
    expect((await f.row('lab-1')).state).toBe('SENT');
  });

  it('fails at once on a 4xx other than 429, with the service code', async () => {
    const f = fixture([new ServiceCallError({ code: 'patient_unresolvable', message: 'who?', retryable: false }, 422)]);
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    expect(await f.row('lab-1')).toMatchObject({ state: 'FAILED', error_code: 'patient_unresolvable' });
    f.clock.advance(3_600_000);
    await f.pusher.runOnce();
    expect(f.posts).toHaveLength(1);
  });

  it('re-sends the same externalId after a crash mid-send (lease expiry), so the service replays', async () => {
    const f = fixture();
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.outbox.claimDue(8, 60_000); // a process that claimed it and died before the answer
    await f.pusher.runOnce();
    expect(f.posts).toEqual([]);
    f.clock.advance(60_000);
    await f.pusher.runOnce();
    expect(f.posts).toEqual(['lab-1']);
    expect((await f.row('lab-1')).attempts).toBe(2);
  });
});

describe('a document that failed here', () => {
  const exhausted = () => new ServiceCallError({ code: 'service_unreachable', message: 'timeout', retryable: true });

  async function failHere() {
    const f = fixture([exhausted(), exhausted(), exhausted(), exhausted()]);
    await f.pusher.enqueue('lab_report', request());
    for (let i = 0; i < 4; i++) {
      await f.pusher.runOnce();
      f.clock.advance(10_000);
    }
    return f;
  }

  it('keeps its request after its retries run out, and goes again on an operator retry', async () => {
    const f = await failHere();
    expect(await f.row('lab-1')).toMatchObject({ state: 'FAILED', error_code: 'retries_exhausted' });
    expect((await f.row('lab-1')).request).not.toBeNull();
    expect(await f.pusher.outbox.resend('lab-1')).toBe(true);
    expect(await f.row('lab-1')).toMatchObject({ state: 'queued', attempts: 0, error_code: null });
    await f.pusher.runOnce();
    expect(await f.row('lab-1')).toMatchObject({ state: 'SENT', request: null });
    expect(f.posts).toEqual(['lab-1', 'lab-1', 'lab-1', 'lab-1', 'lab-1']);
    expect(await f.pusher.outbox.resend('lab-1')).toBe(false);
  });

  it('takes the status of a document event: the service did get it while its answers timed out', async () => {
    const f = await failHere();
    await f.sink.apply({
      eventId: crypto.randomUUID(),
      eventType: 'document.delivered',
      occurredAt: '2026-01-15T12:00:00.000Z',
      clinicId: 'c',
      document: {
        serviceId: 'doc_1',
        externalId: 'lab-1',
        documentType: 'lab_report',
        patientServiceId: 'pat_1',
        status: 'SENT',
        sentAt: '2026-01-15T10:00:05.000Z',
      },
    });
    expect(await f.row('lab-1')).toMatchObject({ state: 'SENT', sent_at: '2026-01-15T10:00:05.000Z', error_code: null, request: null });
  });

  it('is final when the service failed it: an operator retry is refused', async () => {
    const f = fixture([resource({ status: 'FAILED', statusReason: 'the patient has no messaging account', sentAt: undefined })]);
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    expect(await f.row('lab-1')).toMatchObject({ state: 'FAILED', error_code: null, request: null });
    expect(await f.pusher.outbox.resend('lab-1')).toBe(false);
  });
});

describe('final states', () => {
  it('never move again: a late HELD answer or a failed retry leaves SENT as it is', async () => {
    const f = fixture();
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    await f.pusher.outbox.recordOutcome('lab-1', {
      state: 'HELD',
      resource: resource({ status: 'HELD', sentAt: undefined, releaseAfter: '2026-01-16T08:00:00.000Z' }),
    });
    // The retry of a send that held the row with the pass's lease (the clock has not moved since).
    const retry = { at: f.clock.now() + 1000, code: 'service_unreachable', reason: 'timeout' };
    await f.pusher.outbox.settle([{ externalId: 'lab-1', leaseUntil: f.clock.now() + 60_000, retry }], 0, 60_000);
    expect(await f.row('lab-1')).toMatchObject({ state: 'SENT', sent_at: '2026-01-15T10:00:00.000Z', release_after: null, error_code: null });
  });
});

/** The pusher's admin routes in an app of their own, behind the test admin token. */
const adminApp = (pusher: Pusher) =>
  createApp({
    logger: silentLogger(),
    metrics: createMetrics(),
    routers: [],
    adminRouters: [createPusherAdminRouter({ pusher, logger: silentLogger(), maxBodyBytes: parseConfig({}).adminMaxBodyBytes })],
    adminToken: 'admin-token-for-tests-0001',
    readiness: [],
  });

describe('the admin routes', () => {
  it('send again a document that failed here, 409 for a final one, 404 for an unknown one', async () => {
    const f = fixture([new ServiceCallError({ code: 'unauthorized', message: 'bad key', retryable: false }, 401)]);
    const app = adminApp(f.pusher);
    const post = (path: string) => supertest(app.callback()).post(`/admin${path}`).set('authorization', 'Bearer admin-token-for-tests-0001');
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    expect(await f.row('lab-1')).toMatchObject({ state: 'FAILED', error_code: 'unauthorized' });
    const retried = await post('/documents/lab-1/retry');
    expect(retried.status).toBe(200);
    expect(retried.body.document).toMatchObject({ externalId: 'lab-1', status: 'queued', attempts: 0 });
    await f.pusher.runOnce();
    expect((await f.row('lab-1')).state).toBe('SENT');
    const again = await post('/documents/lab-1/retry');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('not_retryable');
    expect((await post('/documents/nope/retry')).status).toBe(404);
  });
});

describe('unknown fields in admin bodies', () => {
  it('answer 400 naming the field, and queue nothing', async () => {
    const f = fixture();
    const app = adminApp(f.pusher);
    const post = (body: unknown) =>
      supertest(app.callback())
        .post('/admin/documents')
        .set('authorization', 'Bearer admin-token-for-tests-0001')
        .send(body as object);
    const top = await post({ documentType: 'lab_report', ...request(), patientPhon: '+15550001111' });
    expect(top.status).toBe(400);
    expect(top.body.error).toMatchObject({ code: 'invalid_request' });
    expect(top.body.error.message).toContain('patientPhon');
    const nested = await post({ documentType: 'lab_report', ...request(), file: { ...request().file, fileName: 'x.pdf' } });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toContain('file.fileName');
    expect(await f.pusher.outbox.list(undefined)).toEqual([]);
  });
});

describe('following HELD documents', () => {
  it('polls after releaseAfter (quiet hours) and on the schedule (auto-send off)', async () => {
    const f = fixture([
      resource({ externalId: 'q', status: 'HELD', statusReason: 'quiet hours', releaseAfter: '2026-01-15T12:00:00.000Z', sentAt: undefined }),
      resource({ externalId: 'p', documentType: 'prescription', status: 'HELD', statusReason: 'auto-send is off', sentAt: undefined }),
    ]);
    await f.pusher.enqueue('lab_report', request({ externalId: 'q' }));
    await f.pusher.runOnce();
    await f.pusher.enqueue('prescription', request({ externalId: 'p' }));
    await f.pusher.runOnce();
    expect((await f.row('q')).next_poll_at).toBe(Date.parse('2026-01-15T12:00:01.000Z'));
    expect((await f.row('p')).next_poll_at).toBe(f.clock.now() + 300_000);
    f.setLookups([resource({ externalId: 'p', status: 'HELD', sentAt: undefined })]);
    f.clock.advance(300_000);
    await f.pusher.runOnce();
    expect((await f.row('p')).state).toBe('HELD');
    // Both are due by then, asked in poll order: the prescription (still held), then the lab report.
    f.setLookups([
      resource({ externalId: 'p', status: 'HELD', sentAt: undefined }),
      resource({ externalId: 'q', status: 'SENT', sentAt: '2026-01-15T12:00:00.000Z' }),
    ]);
    f.clock.set(Date.parse('2026-01-15T12:00:01.000Z'));
    await f.pusher.runOnce();
    expect(await f.row('q')).toMatchObject({ state: 'SENT', sent_at: '2026-01-15T12:00:00.000Z' });
  });

  it('takes document.delivered at once, ignores it after a final state, records unknown documents', async () => {
    const f = fixture([resource({ status: 'HELD', sentAt: undefined })]);
    await f.pusher.enqueue('lab_report', request());
    await f.pusher.runOnce();
    const event = (externalId: string, status: 'SENT' | 'FAILED') => ({
      eventId: crypto.randomUUID(),
      eventType: 'document.delivered' as const,
      occurredAt: '2026-01-15T12:00:00.000Z',
      clinicId: 'c',
      document: { serviceId: 'doc_1', externalId, documentType: 'lab_report' as const, patientServiceId: 'pat_1', status, sentAt: '2026-01-15T12:00:00.000Z' },
    });
    await f.sink.apply(event('lab-1', 'SENT'));
    expect((await f.row('lab-1')).state).toBe('SENT');
    await f.sink.apply(event('lab-1', 'FAILED'));
    expect((await f.row('lab-1')).state).toBe('SENT');
    await f.sink.apply(event('unknown-doc', 'SENT'));
    expect(f.db.prepare('SELECT count(*) FROM unmatched_document_events').pluck().get()).toBe(1);
  });
});

describe('the EMR side', () => {
  const emrDoc = (id: string) => ({
    id,
    version: '1',
    documentType: 'lab_report' as const,
    label: 'CBC',
    filename: 'cbc.pdf',
    content: { base64: PDF.toString('base64') },
    patient: { id: 'emr-patient-1', phone: '+15550001111', name: 'Synthetic' },
    lastUpdated: '2026-01-15T09:00:00.000Z',
  });
  const mapping = (f: ReturnType<typeof fixture>) =>
    f.db.prepare("SELECT emr_id FROM emr_mappings WHERE entity_type = 'patient' AND service_id = 'pat_new'").pluck().get();
  const queued = (f: ReturnType<typeof fixture>) =>
    f.db.prepare("SELECT external_id FROM mapping_outbox WHERE entity_type = 'patient' AND service_id = 'pat_new'").pluck().get();

  it("links the service's new patient to the EMR patient at once, posts the link and marks the EMR record", async () => {
    const f = fixture([resource({ externalId: 'dr-1', patientServiceId: 'pat_new' })]);
    f.emr.documents.push(emrDoc('dr-1'));
    await f.pusher.scanOnce();
    await f.pusher.runOnce();
    expect(mapping(f)).toBe('emr-patient-1');
    expect(queued(f)).toBe('emr-patient-1');
    expect(f.emr.records.patient.get('pat_new')?.id).toBe('emr-patient-1');
  });

  it('leaves a patient the processor claimed first as it is, marks no second EMR record with its id, and raises an alert', async () => {
    const f = fixture([resource({ externalId: 'dr-1', patientServiceId: 'pat_new' })]);
    f.db.prepare("INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES ('patient', 'pat_new', 'claimed-1', 0)").run();
    f.emr.documents.push(emrDoc('dr-1'));
    await f.pusher.scanOnce();
    await f.pusher.runOnce();
    expect(mapping(f)).toBe('claimed-1');
    expect(queued(f)).toBeUndefined();
    expect(f.emr.records.patient.get('pat_new')).toBeUndefined();
    expect(f.emr.outcomes.get('dr-1')?.map((o) => o.status)).toEqual(['SENT']);
    const alert = f.logLines().find((l) => l.alert === true);
    expect(alert).toMatchObject({ patientServiceId: 'pat_new', emrPatientId: 'emr-patient-1', externalId: 'dr-1' });
    expect(JSON.stringify(alert)).not.toContain('+1555');
  });

  it('scans EMR documents, sends them once, and writes each status back (retrying while the EMR is down)', async () => {
    const f = fixture([resource({ externalId: 'dr-1', status: 'HELD', releaseAfter: '2026-01-15T12:00:00.000Z', sentAt: undefined })]);
    f.emr.documents.push(
      {
        id: 'dr-1',
        version: '1',
        documentType: 'lab_report',
        label: 'CBC',
        filename: 'cbc.pdf',
        content: { base64: PDF.toString('base64') },
        patient: { id: 'p1', serviceId: 'pat_1', phone: '+15550001111', name: 'Synthetic' },
        lastUpdated: '2026-01-15T09:00:00.000Z',
      },
      {
        id: 'dr-2',
        version: '1',
        documentType: 'lab_report',
        label: 'Bad',
        filename: 'x.gif',
        content: { base64: Buffer.from('GIF89a-nope').toString('base64') },
        patient: { id: 'p1' },
        lastUpdated: '2026-01-15T09:00:01.000Z',
      },
    );
    expect(await f.pusher.scanOnce()).toBe(2);
    expect(await f.pusher.scanOnce()).toBe(0);
    f.emr.down = true;
    await f.pusher.runOnce();
    expect((await f.row('dr-1')).emr_synced).toBe(0);
    f.emr.down = false;
    await f.pusher.runOnce();
    expect(f.emr.outcomes.get('dr-1')?.map((o) => o.status)).toEqual(['HELD']);
    expect(f.emr.outcomes.get('dr-2')?.[0]).toMatchObject({ status: 'REJECTED', statusReason: expect.stringContaining('PDF, JPEG and PNG') });
    expect(JSON.parse((await f.pusher.outbox.list(undefined)).find((r) => r.external_id === 'dr-1')!.request ?? 'null')).toBeNull();
    expect(f.posts).toEqual(['dr-1']);
  });
});
