// The integration API's document rules, row by row of the state table, with the error codes of docs/decisions.md#error-bodies.
import { afterEach, describe, expect, it } from 'vitest';
import { documentEventSchema } from '../../src/contract/events.ts';
import { simulatorFixture } from '../support/simulator-fixture.ts';

type F = Awaited<ReturnType<typeof simulatorFixture>>;
let f: F;
afterEach(async () => f?.close());

const messages = async (x: F) =>
  (await x.http().get('/_sim/messages')).body as { phone: string; text: string; attachment: { name: string; sha256: string; size: number } }[];

describe('documents', () => {
  it('SENT: auto-send on, outside quiet hours; one message with the label; document.delivered', async () => {
    f = await simulatorFixture({ clinic: { timeZone: 'UTC' } });
    const res = await f.api('post', 'lab-reports').send(f.labReport());
    expect(res.status).toBe(201);
    expect(res.body.resource).toMatchObject({ type: 'document', documentType: 'lab_report', status: 'SENT', action: 'received' });
    expect(res.body.resource.sentAt).toBe('2026-01-15T12:00:00.000Z');
    const m = await messages(f);
    expect(m).toHaveLength(1);
    expect(m[0]).toMatchObject({ phone: '+15550001111', attachment: { name: 'blood.pdf' } });
    expect(m[0]!.text).toContain('Blood count');
    await f.sim.runDue();
    const delivered = f.subscriber.received.filter((r) => r.json.eventType === 'document.delivered');
    expect(delivered).toHaveLength(1);
    expect(documentEventSchema.safeParse(delivered[0]!.json).success).toBe(true);
  });

  it('HELD: a prescription with auto-send off; a clinic person releases it; SENT', async () => {
    f = await simulatorFixture();
    const res = await f.api('post', 'prescriptions').send(f.labReport({ label: 'Amoxicillin' }));
    expect(res.body.resource).toMatchObject({ status: 'HELD' });
    expect(res.body.resource.statusReason).toMatch(/auto-send is off/);
    expect(await messages(f)).toHaveLength(0);
    const released = await f.http().post(`/_sim/documents/${res.body.resource.serviceId}/release`);
    expect(released.body.status).toBe('SENT');
    const found = await f.api('get', `documents/${res.body.resource.externalId}`);
    expect(found.status).toBe(200);
    expect(found.body.resource).toMatchObject({ status: 'SENT', action: 'found' });
  });

  it('HELD for quiet hours with releaseAfter, delivered when the clock passes it', async () => {
    f = await simulatorFixture({ start: '2026-01-15T22:00:00.000Z', clinic: { timeZone: 'Europe/Berlin' } });
    const res = await f.api('post', 'lab-reports').send(f.labReport());
    expect(res.body.resource).toMatchObject({ status: 'HELD', releaseAfter: '2026-01-16T07:00:00.000Z' });
    expect(res.body.resource.statusReason).toMatch(/quiet hours/);
    await f
      .http()
      .post('/_sim/clock/advance')
      .send({ seconds: 10 * 3600 });
    const found = await f.api('get', `documents/${res.body.resource.externalId}`);
    expect(found.body.resource).toMatchObject({ status: 'SENT', sentAt: '2026-01-16T07:00:00.000Z' });
    expect(await messages(f)).toHaveLength(1);
  });

  it('delivers a quiet-hours hold at exactly releaseAfter, however long the jump forward takes in real time', async () => {
    f = await simulatorFixture({ start: '2026-01-15T22:00:00.000Z', clinic: { timeZone: 'UTC' }, realTimePasses: true });
    const res = await f.api('post', 'lab-reports').send(f.labReport());
    expect(res.body.resource).toMatchObject({ status: 'HELD', releaseAfter: '2026-01-16T08:00:00.000Z' });
    const before = f.clock.offsetMs();
    await f
      .http()
      .post('/_sim/clock/advance')
      .send({ seconds: 12 * 3600 });
    expect(f.clock.offsetMs() - before).toBe(12 * 3600_000);
    const found = await f.api('get', `documents/${res.body.resource.externalId}`);
    expect(found.body.resource).toMatchObject({ status: 'SENT', sentAt: '2026-01-16T08:00:00.000Z' });
  });

  it('release inside quiet hours stays HELD with the quiet-hours reason', async () => {
    f = await simulatorFixture({ start: '2026-01-15T22:00:00.000Z', clinic: { timeZone: 'UTC' } });
    const res = await f.api('post', 'prescriptions').send(f.labReport());
    const released = await f.http().post(`/_sim/documents/${res.body.resource.serviceId}/release`);
    expect(released.body).toMatchObject({ status: 'HELD', releaseAfter: '2026-01-16T08:00:00.000Z' });
  });

  it('SUPPRESSED with a sandbox key: stored, never sent', async () => {
    f = await simulatorFixture();
    const sandbox = (await f.http().post('/_sim/keys').send({ clinicId: f.clinicId, mode: 'sandbox' })).body.key as string;
    expect(sandbox).toMatch(/^sandbox_/);
    const res = await f.api('post', 'lab-reports', sandbox).send(f.labReport());
    expect(res.body.resource.status).toBe('SUPPRESSED');
    expect(await messages(f)).toHaveLength(0);
  });

  it('FAILED with statusReason when messaging fails; document.failed', async () => {
    f = await simulatorFixture();
    await f
      .http()
      .post('/_sim/faults')
      .send({ messaging: { failReason: 'messaging account not reachable' } });
    const res = await f.api('post', 'lab-reports').send(f.labReport());
    expect(res.status).toBe(201);
    expect(res.body.resource).toMatchObject({ status: 'FAILED', statusReason: 'messaging account not reachable' });
    await f.sim.runDue();
    expect(f.subscriber.received.some((r) => r.json.eventType === 'document.failed')).toBe(true);
  });

  it('a repeated externalId replays the first response and never delivers twice', async () => {
    f = await simulatorFixture();
    const body = f.labReport();
    const [a, b] = await Promise.all([f.api('post', 'lab-reports').send(body), f.api('post', 'lab-reports').send(body)]);
    const c = await f.api('post', 'lab-reports').send(body);
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(b.body).toEqual(a.body);
    expect(c.body).toEqual(a.body);
    expect(c.headers['idempotent-replayed']).toBe('true');
    expect(await messages(f)).toHaveLength(1);
  });

  it.each([
    ['no key', undefined, 401, 'unauthorized'],
    ['an unknown key', 'live_nope', 401, 'unauthorized'],
  ])('answers %s with 401', async (_l, key, status, code) => {
    f = await simulatorFixture();
    const req = f.http().post('/integration/v1/lab-reports');
    const res = await (key ? req.set('authorization', `Bearer ${key}`) : req).send(f.labReport());
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });

  it.each([
    ['a missing label', { label: undefined }, 400, 'invalid_request', 'label'],
    ['no patient identification', { patientPhone: undefined, patientName: undefined }, 422, 'patient_unresolvable', undefined],
    [
      'bytes that are not PDF, JPEG or PNG',
      { file: { base64: Buffer.from('GIF89a....').toString('base64'), filename: 'x.pdf' } },
      415,
      'unsupported_file_type',
      'file',
    ],
    [
      'a file over 15 MB',
      { file: { base64: Buffer.alloc(15 * 1024 * 1024 + 10, 0x25).toString('base64'), filename: 'big.pdf' } },
      413,
      'file_too_large',
      'file',
    ],
    ['a non-https file.url', { file: { url: 'http://127.0.0.1/report.pdf', filename: 'r.pdf' } }, 422, 'file_url_rejected', 'file'],
    ['an unreachable https file.url', { file: { url: 'https://127.0.0.1:9/report.pdf', filename: 'r.pdf' } }, 422, 'file_url_unreachable', 'file'],
  ])('refuses %s', async (_l, overrides, status, code, field) => {
    f = await simulatorFixture();
    const res = await f.api('post', 'lab-reports').send(f.labReport(overrides));
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    if (field) expect(res.body.error.field).toBe(field);
    expect(await messages(f)).toHaveLength(0);
  });

  it('limits requests per key per minute with 429 and Retry-After', async () => {
    f = await simulatorFixture();
    await f.http().post('/_sim/faults').send({ rateLimitPerMinute: 2 });
    expect((await f.api('get', 'documents/a')).status).toBe(404);
    expect((await f.api('get', 'documents/b')).status).toBe(404);
    const limited = await f.api('get', 'documents/c');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    f.clock.advance(60_000);
    expect((await f.api('get', 'documents/d')).status).toBe(404);
  });

  it('GET of an unknown externalId is 404 not_found', async () => {
    f = await simulatorFixture();
    const res = await f.api('get', 'documents/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('mappings: 200, the same again 200, a different externalId 409, an unknown serviceId 404', async () => {
    f = await simulatorFixture();
    const apt = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId })).body as { serviceId: string };
    const put = (id: string, externalId: string) => f.api('put', `mappings/appointment/${id}`).send({ externalId });
    expect((await put(apt.serviceId, 'fhir-1')).status).toBe(200);
    expect((await put(apt.serviceId, 'fhir-1')).body.resource).toEqual({
      type: 'mapping',
      entityType: 'appointment',
      serviceId: apt.serviceId,
      externalId: 'fhir-1',
    });
    expect((await put(apt.serviceId, 'fhir-2')).body.error.code).toBe('mapping_conflict');
    expect((await put('apt_unknown', 'fhir-1')).status).toBe(404);
    expect((await f.api('put', `mappings/invoice/${apt.serviceId}`).send({ externalId: 'x' })).status).toBe(400);
    await f.http().post(`/_sim/appointments/${apt.serviceId}/cancel`);
    await f.sim.runDue();
    const cancelled = f.subscriber.received.find((r) => r.json.eventType === 'appointment.cancelled')!;
    expect((cancelled.json.appointment as { externalId: string }).externalId).toBe('fhir-1');
  });

  it('the mapping refusal fault refuses every mapping (404 or 409) until lifted, storing nothing', async () => {
    f = await simulatorFixture();
    const apt = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId })).body as { serviceId: string };
    const put = (externalId: string) => f.api('put', `mappings/appointment/${apt.serviceId}`).send({ externalId });
    await f
      .http()
      .post('/_sim/faults')
      .send({ mappings: { refuse: 404 } })
      .expect(200);
    expect((await put('fhir-1')).body.error.code).toBe('not_found');
    await f
      .http()
      .post('/_sim/faults')
      .send({ mappings: { refuse: 409 } })
      .expect(200);
    const conflict = await put('fhir-1');
    expect([conflict.status, conflict.body.error.code]).toEqual([409, 'mapping_conflict']);
    await f
      .http()
      .post('/_sim/faults')
      .send({ mappings: { refuse: 500 } })
      .expect(400);
    await f.http().delete('/_sim/faults').expect(200);
    // Nothing was stored: the first mapping after the fault is taken as new.
    expect((await put('fhir-2')).status).toBe(200);
  });

  it('the 5xx and 429 faults answer the next requests, 429 with Retry-After', async () => {
    f = await simulatorFixture();
    await f
      .http()
      .post('/_sim/faults')
      .send({ integration: { status: 429, count: 1, retryAfterSeconds: 7 } });
    const limited = await f.api('post', 'lab-reports').send(f.labReport());
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expect((await f.api('post', 'lab-reports').send(f.labReport())).status).toBe(201);
    await f
      .http()
      .post('/_sim/faults')
      .send({ integration: { status: 503, count: 2 } });
    expect((await f.api('get', 'documents/x')).status).toBe(503);
    expect((await f.api('get', 'documents/x')).status).toBe(503);
    expect((await f.api('get', 'documents/x')).status).toBe(404);
  });
});
