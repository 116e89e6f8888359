// The quarantine end to end on a running adapter (CONTRACT section 8): a 2 MiB signed webhook over the limit is kept
// and answered 202, listed by GET /admin/quarantine; apply is refused (422, saying to raise WEBHOOK_MAX_BODY_BYTES)
// until the adapter is restarted with a larger limit; then applied once, processed once into the EMR, and a second
// apply is refused (409) and changes nothing. A forged one is refused and never listed. Dismiss keeps the row with
// its reason. Each action is in the audit trail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { type RunningAdapter, startAdapter } from '../../src/runtime/adapter.ts';
import { SEALED_PREFIX } from '../../src/sealing/format.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { csrfOf } from '../console/support/console-app.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const MiB = 1024 * 1024;
const ADMIN_TOKEN = 'quarantine-admin-token-0001';
const MARKER_NAME = 'Zxcvbnm Applyname';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function adapterOn(dir: string, emr: MemoryEmr, maxBodyBytes: number): Promise<RunningAdapter> {
  const adapter = await startAdapter({
    config: quietAdapterConfig(dir, ADMIN_TOKEN, { PROCESSOR_POLL_MS: '20', WEBHOOK_MAX_BODY_BYTES: String(maxBodyBytes) }),
    logger: silentLogger(),
    emr,
  });
  let closed = false;
  cleanups.push(() => !closed && adapter.close());
  const close = adapter.close.bind(adapter);
  adapter.close = async () => {
    closed = true;
    await close();
  };
  return adapter;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-quarantine-admin-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A signed appointment webhook of about 2 MiB (its notes), its patient named with a marker. */
function bigAppointment(a: RunningAdapter, opts: { secrets?: string[] } = {}) {
  const event = appointmentEventBody() as Record<string, unknown> & { patient: Record<string, unknown>; appointment: Record<string, unknown> };
  const body = { ...event, patient: { ...event.patient, name: MARKER_NAME }, appointment: { ...event.appointment, notes: 'n'.repeat(2 * MiB) } };
  const w = signedWebhook(Date.now(), { body, keyId: a.keyId, secrets: opts.secrets ?? a.signingSecrets });
  return { ...w, eventId: String(event.eventId) };
}

const post = async (a: RunningAdapter, w: { body: Buffer; headers: Record<string, string> }) => {
  const res = await fetch(a.webhookUrl, { method: 'POST', headers: w.headers, body: w.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const admin = <T = Record<string, unknown>>(a: RunningAdapter, method: 'GET' | 'POST', path: string, body?: unknown) =>
  json(method, `${a.adminUrl}/admin${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` }) as Promise<{ status: number; body: T }>;

type Listed = {
  events: { eventId: string; size: number; fitsLimit: boolean; state: string }[];
  quarantine: { events: number; bytes: number; capacityBytes: number };
};

describe('the quarantine on a running adapter', () => {
  it('keeps a 2 MiB signed webhook (202), applies it once after the limit is raised and a restart, and it is processed once', async () => {
    const dir = tempDir();
    const emr = createMemoryEmr();
    let a = await adapterOn(dir, emr, 256 * 1024);
    const w = bigAppointment(a);
    expect(await post(a, w)).toEqual({ status: 202, body: { received: true, duplicate: false, quarantined: true } });
    // A forged one is refused and never listed.
    const forged = bigAppointment(a, { secrets: ['not the secret'] });
    expect((await post(a, forged)).status).toBe(401);

    const listed = await admin<Listed>(a, 'GET', '/quarantine');
    expect(listed.status).toBe(200);
    expect(listed.body.events).toEqual([expect.objectContaining({ eventId: w.eventId, size: w.body.length, fitsLimit: false, state: 'quarantined' })]);
    expect(listed.body.quarantine).toMatchObject({ events: 1, capacityBytes: 256 * MiB });
    expect(JSON.stringify(listed.body)).not.toContain(MARKER_NAME);
    // The console counts it on the overview and lists it.
    const browser = request.agent(a.adminUrl);
    const signIn = await browser.get('/console/sign-in').expect(200);
    await browser
      .post('/console/sign-in')
      .type('form')
      .send({ token: ADMIN_TOKEN, csrf: csrfOf(signIn.text) })
      .expect(303);
    expect((await browser.get('/console/overview.json').expect(200)).body).toMatchObject({ quarantined: 1 });
    expect((await browser.get('/console/quarantine').expect(200)).text).toContain(w.eventId);

    // Not yet: the limit is what it was.
    const early = await admin(a, 'POST', `/quarantine/${w.eventId}/apply`);
    expect(early.status).toBe(422);
    expect(early.body).toMatchObject({
      error: { code: 'limit_too_low', message: expect.stringContaining(`raise WEBHOOK_MAX_BODY_BYTES to at least ${w.body.length}`) },
    });
    expect((await admin(a, 'GET', `/events/${w.eventId}`)).status).toBe(404);
    await a.close();

    // The limit raised, the adapter restarted: apply it, twice.
    a = await adapterOn(dir, emr, 4 * MiB);
    expect((await admin<Listed>(a, 'GET', '/quarantine')).body.events[0]).toMatchObject({ fitsLimit: true });
    const first = await admin(a, 'POST', `/quarantine/${w.eventId}/apply`);
    expect(first).toMatchObject({ status: 200, body: { applied: { eventId: w.eventId, state: 'applied', applied: { by: 'admin' } }, inbox: 'stored' } });
    const second = await admin(a, 'POST', `/quarantine/${w.eventId}/apply`);
    expect(second).toMatchObject({ status: 409, body: { error: { code: 'not_quarantined' } } });

    const applied = await waitFor(async () => {
      const r = await admin<{ state: string; history: { state: string }[] }>(a, 'GET', `/events/${w.eventId}`);
      return r.body.state === 'applied' ? r.body : undefined;
    }, 20_000);
    expect(applied.history.filter((h) => h.state === 'applied')).toHaveLength(1);
    expect(emr.records.appointment.size).toBe(1);
    // A repeat from the service now is a duplicate of the inbox's event, and nothing runs again.
    expect(
      await post(a, signedWebhook(Date.now(), { body: w.body, keyId: a.keyId, secrets: a.signingSecrets, headers: { 'x-service-event-id': w.eventId } })),
    ).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect((await admin<Listed>(a, 'GET', '/quarantine')).body.quarantine).toMatchObject({ events: 0, bytes: 0 });
    expect((await admin<Listed>(a, 'GET', '/quarantine?state=applied')).body.events.map((e) => e.eventId)).toEqual([w.eventId]);

    const audit = await admin<{ entries: { action: string; targets: string[]; outcome: string }[] }>(a, 'GET', '/audit?action=quarantine.apply');
    expect(audit.body.entries.map((e) => [e.targets, e.outcome])).toEqual([
      [[w.eventId], 'refused'],
      [[w.eventId], 'ok'],
      [[w.eventId], 'refused'],
    ]);
    await a.close();

    // The inbox row holds the body sealed, the quarantine's none.
    const db = new Database(join(dir, 'emr-bridge.db'), { readonly: true });
    try {
      const inboxBody = db.prepare('SELECT body FROM inbox_events WHERE event_id = ?').pluck().get(w.eventId) as Buffer | null;
      expect(inboxBody === null || (inboxBody.toString('latin1').startsWith(SEALED_PREFIX) && !inboxBody.includes(MARKER_NAME))).toBe(true);
      expect(db.prepare('SELECT body FROM webhook_quarantine WHERE event_id = ?').pluck().get(w.eventId)).toBeNull();
      expect(db.prepare('SELECT count(*) FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE e.event_id = ?').pluck().get(w.eventId)).toBe(1);
    } finally {
      db.close();
    }
  }, 60_000);

  it('dismisses a quarantined webhook with a reason, once; a dismissed one is never applied', async () => {
    const dir = tempDir();
    const a = await adapterOn(dir, createMemoryEmr(), 256 * 1024);
    const w = bigAppointment(a);
    expect((await post(a, w)).status).toBe(202);
    expect((await admin(a, 'POST', `/quarantine/${w.eventId}/dismiss`, {})).status).toBe(400);
    const dismissed = await admin(a, 'POST', `/quarantine/${w.eventId}/dismiss`, { reason: 'sent again by the clinic, smaller' });
    expect(dismissed).toMatchObject({
      status: 200,
      body: { dismissed: { eventId: w.eventId, state: 'dismissed', dismissal: { reason: 'sent again by the clinic, smaller', by: 'admin' } } },
    });
    expect((await admin(a, 'POST', `/quarantine/${w.eventId}/dismiss`, { reason: 'again' })).status).toBe(409);
    expect((await admin(a, 'POST', `/quarantine/${w.eventId}/apply`)).status).toBe(409);
    expect((await admin(a, 'POST', '/quarantine/no-such-event/apply')).status).toBe(404);
    expect((await admin<Listed>(a, 'GET', '/quarantine?state=dismissed')).body.events.map((e) => e.eventId)).toEqual([w.eventId]);
    expect((await admin(a, 'GET', '/quarantine?state=lost')).status).toBe(400);
    const audit = await admin<{ entries: { targets: string[]; outcome: string }[] }>(a, 'GET', '/audit?action=quarantine.dismiss');
    expect(audit.body.entries.map((e) => e.outcome)).toEqual(['refused', 'ok', 'refused']);
    // The reason text stays out of the audit trail.
    expect(JSON.stringify(audit.body)).not.toContain('smaller');
  }, 60_000);
});
