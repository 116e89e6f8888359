// POST /webhooks/service answers: 200 stored, 200 duplicate, 401 for every verification failure,
// 413 oversize, 503 when the inbox cannot write; and what lands in the inbox in each case.
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { receiverFixture, type ReceiverFixture } from '../support/receiver-app.ts';
import { appointmentEventBody, signedWebhook, TEST_SECRET } from '../support/webhooks.ts';

let f: ReceiverFixture;
beforeEach(() => {
  f = receiverFixture();
});
afterEach(() => f.close());

const rows = () =>
  f.db.prepare('SELECT event_id, event_type, headers, body FROM inbox_events ORDER BY id').all() as {
    event_id: string;
    event_type: string;
    headers: string;
    body: Buffer;
  }[];

function post(w: { body: Buffer; headers: Record<string, string> }) {
  // superagent would JSON-encode a Buffer sent as application/json, so the bytes go as a string.
  return request(f.app.callback()).post('/webhooks/service').set(w.headers).send(w.body.toString('utf8'));
}

describe('POST /webhooks/service', () => {
  it('stores a verified event with its raw bytes and headers, then answers 200', async () => {
    const w = signedWebhook(f.clock.now());
    const res = await post(w);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, duplicate: false });
    const [row] = rows();
    expect(row!.body.equals(w.body)).toBe(true);
    expect(row!.event_id).toBe(JSON.parse(w.body.toString()).eventId);
    expect(row!.event_type).toBe('appointment.created');
    expect(JSON.parse(row!.headers)['x-service-delivery-attempt']).toBe('1');
  });

  it('answers 2xx for a duplicate eventId and stores it once', async () => {
    const body = appointmentEventBody();
    await post(signedWebhook(f.clock.now(), { body }));
    const again = await post(signedWebhook(f.clock.now(), { body, attempt: 2 }));
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect(rows()).toHaveLength(1);
  });

  it('stores concurrent duplicates once', async () => {
    const body = appointmentEventBody();
    const results = await Promise.all([1, 2, 3, 4].map(() => post(signedWebhook(f.clock.now(), { body }))));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(rows()).toHaveLength(1);
  });

  it.each([
    ['a wrong secret', { secrets: ['not the secret'] }],
    ['a wrong key id', { keyId: 'key_other' }],
    ['no signature header', { headers: { 'x-service-signature': undefined } }],
    ['no timestamp header', { headers: { 'x-service-timestamp': undefined } }],
    ['a timestamp 301 s old', { timestamp: Math.floor(Date.parse('2026-01-15T10:00:00Z') / 1000) - 301 }],
  ])('answers 401 and stores nothing for %s', async (_label, opts) => {
    const res = await post(signedWebhook(f.clock.now(), opts));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_signature');
    expect(rows()).toHaveLength(0);
  });

  it('answers 401 for bytes changed after signing', async () => {
    const w = signedWebhook(f.clock.now());
    const tampered = Buffer.from(w.body.toString().replace('Approved', 'Cancelled'));
    expect((await post({ ...w, body: tampered })).status).toBe(401);
    expect(rows()).toHaveLength(0);
  });

  it('stores and acknowledges a signed body that is not JSON (nothing signed is lost)', async () => {
    const w = signedWebhook(f.clock.now(), { body: 'this is {not json' });
    const res = await post(w);
    expect(res.status).toBe(200);
    const [row] = rows();
    expect(row!.body.toString()).toBe('this is {not json');
    expect(row!.event_id).toBe(w.headers['x-service-event-id']);
  });

  it('files a non-JSON body without an event-id header under a hash of its bytes, once', async () => {
    const opts = { body: 'garbage', headers: { 'x-service-event-id': undefined, 'x-service-event-type': undefined } };
    await post(signedWebhook(f.clock.now(), opts));
    await post(signedWebhook(f.clock.now(), opts));
    expect(rows()).toHaveLength(1);
    expect(rows()[0]!.event_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(rows()[0]!.event_type).toBe('unknown');
  });

  it('stores a signed event of an unknown type (the processor decides)', async () => {
    const res = await post(signedWebhook(f.clock.now(), { body: appointmentEventBody({ eventType: 'invoice.created' }) }));
    expect(res.status).toBe(200);
    expect(rows()[0]!.event_type).toBe('invoice.created');
  });

  it('answers 413 over the size limit and stores nothing', async () => {
    const big = appointmentEventBody({ padding: 'x'.repeat(300 * 1024) });
    const res = await post(signedWebhook(f.clock.now(), { body: big }));
    expect(res.status).toBe(413);
    expect(rows()).toHaveLength(0);
  });

  it('takes the webhook with a query string, and at a trailing slash through the router', async () => {
    for (const path of ['/webhooks/service?via=test', '/webhooks/service/']) {
      const w = signedWebhook(f.clock.now());
      const res = await request(f.app.callback()).post(path).set(w.headers).send(w.body.toString('utf8'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, duplicate: false });
    }
    expect(rows()).toHaveLength(2);
  });

  it('answers 405 to other methods on the webhook path', async () => {
    const res = await request(f.app.callback()).get('/webhooks/service');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('answers 503, never 2xx, when the database is read-only', async () => {
    await f.close();
    const rw = receiverFixture();
    const path = rw.db.name;
    await rw.inbox.close();
    rw.db.close();
    f = receiverFixture({ db: openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, readonly: true }) });
    const res = await post(signedWebhook(f.clock.now(), { secrets: [TEST_SECRET] }));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('inbox_unavailable');
    expect(JSON.stringify(res.body)).not.toMatch(/SQLITE|readonly/i);
    const ready = await request(f.app.callback()).get('/readyz');
    expect(ready.status).toBe(503);
    await rw.close();
  });
});

describe('health, readiness, metrics, admin', () => {
  it('GET /healthz and /readyz answer 200 on a writable database', async () => {
    expect((await request(f.app.callback()).get('/healthz')).status).toBe(200);
    const ready = await request(f.app.callback()).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database).toBe('ok');
  });

  it('GET /metrics counts received, rejected by reason, latency and inbox depth', async () => {
    await post(signedWebhook(f.clock.now()));
    await post(signedWebhook(f.clock.now(), { secrets: ['wrong'] }));
    const text = (await request(f.app.callback()).get('/metrics')).text;
    expect(text).toMatch(/emr_bridge_webhook_events_received_total\{event_type="appointment.created",duplicate="false"\} 1/);
    expect(text).toMatch(/emr_bridge_webhook_events_rejected_total\{reason="bad_signature"\} 1/);
    expect(text).toMatch(/emr_bridge_webhook_ack_seconds_count 1/);
    expect(text).toMatch(/emr_bridge_inbox_depth 1/);
  });

  it('admin routes answer 401 without the token, with a wrong one, and 404 behind a right one', async () => {
    const app = f.app.callback();
    expect((await request(app).get('/admin/anything')).status).toBe(401);
    expect((await request(app).get('/admin/anything').set('authorization', 'Bearer wrong')).status).toBe(401);
    const ok = await request(app).get('/admin/anything').set('authorization', 'Bearer admin-token-for-tests-0001');
    expect(ok.status).toBe(404);
  });

  it('unknown routes answer the error shape', async () => {
    const res = await request(f.app.callback()).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'no such route' } });
  });
});
