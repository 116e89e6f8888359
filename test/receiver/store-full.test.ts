// Readiness follows the store's real writes: a database that is really full (SQLITE_FULL, made with
// PRAGMA max_page_count on a file database) turns webhooks, /readyz and /admin/status to failing, and once
// there is room again readiness turns ready by itself (the probe) or with the next commit that succeeds.
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { receiverFixture, ADMIN_TOKEN, type ReceiverFixture } from '../support/receiver-app.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { waitFor } from '../support/wait.ts';

let f: ReceiverFixture;
afterEach(() => f?.close());

/** A delivery of about 7 KB (long notes), so each one needs fresh pages in the inbox. */
function bigEvent(): Record<string, unknown> {
  const event = appointmentEventBody();
  Object.assign(event.appointment as object, { notes: 'Synthetic notes '.repeat(400) });
  return event;
}

function post(body: Record<string, unknown>) {
  const w = signedWebhook(f.clock.now(), { body });
  return request(f.app.callback()).post('/webhooks/service').set(w.headers).send(w.body.toString('utf8'));
}
const readyz = () => request(f.app.callback()).get('/readyz');
const database = async () => {
  const res = await request(f.app.callback()).get('/admin/status').set('authorization', `Bearer ${ADMIN_TOKEN}`);
  return (res.body.components as { name: string; ok: boolean; reason: string | null }[]).find((c) => c.name === 'database')!;
};
const pageCount = () => Number(f.db.pragma('page_count', { simple: true }));
const storedIds = () => f.db.prepare('SELECT event_id FROM inbox_events').pluck().all() as string[];

/** Caps the file at its current size, then posts until a webhook is refused; returns the refused event. */
async function fillTheStore(): Promise<Record<string, unknown>> {
  f.db.pragma(`max_page_count = ${pageCount()}`);
  for (let i = 0; i < 30; i++) {
    const event = bigEvent();
    const res = await post(event);
    if (res.status === 503) {
      expect(res.body.error.code).toBe('inbox_unavailable');
      return event;
    }
    expect(res.status).toBe(200);
  }
  throw new Error('the store never filled up');
}

describe('a store that cannot take writes', () => {
  it('is not ready while full, and turns ready by itself once there is room, with no webhook coming', async () => {
    f = receiverFixture({ probeIntervalMs: 50 });
    expect((await readyz()).status).toBe(200);

    const refused = await fillTheStore();
    const notReady = await readyz();
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks.database).toBe('failing');
    const failing = await database();
    expect(failing.ok).toBe(false);
    expect(failing.reason).toMatch(/^SQLITE_FULL: /);

    // The probe commits a real write: while the file is still full, it keeps failing.
    await new Promise((r) => setTimeout(r, 300));
    expect((await readyz()).status).toBe(503);

    f.db.pragma(`max_page_count = ${pageCount() + 1000}`);
    await waitFor(async () => (await readyz()).status === 200, 5_000);
    expect((await database()).ok).toBe(true);
    expect(f.db.prepare('SELECT count(*) FROM store_probe').pluck().get()).toBe(1);

    // The service retries the refused delivery on its ladder: now it is stored and acknowledged.
    const retried = await post(refused);
    expect(retried.status).toBe(200);
    expect(retried.body.duplicate).toBe(false);
    expect(storedIds()).toContain(refused.eventId);
  });

  it('turns ready with the next webhook that commits, before any probe runs', async () => {
    f = receiverFixture({ probeIntervalMs: 60_000 });
    const refused = await fillTheStore();
    expect((await readyz()).status).toBe(503);

    f.db.pragma(`max_page_count = ${pageCount() + 1000}`);
    expect((await post(refused)).status).toBe(200);
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database).toBe('ok');
    expect(f.db.prepare('SELECT count(*) FROM store_probe').pluck().get()).toBe(0);
  });

  it('stays not ready while every probe fails, and says why without patient data', async () => {
    f = receiverFixture({ probeIntervalMs: 20 });
    await fillTheStore();
    await new Promise((r) => setTimeout(r, 200));
    expect((await readyz()).status).toBe(503);
    const failing = await database();
    expect(failing.reason).toMatch(/^SQLITE_FULL: /);
    expect(failing.reason).not.toMatch(/Synthetic|Test Patient|\+1555/);
    expect(f.db.prepare('SELECT count(*) FROM store_probe').pluck().get()).toBe(0);
  });
});
