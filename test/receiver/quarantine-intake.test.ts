// A webhook over WEBHOOK_MAX_BODY_BYTES (src/receiver/quarantine-intake.ts): a correctly signed one is kept in the
// quarantine, sealed, and answered 202 (its repeat acknowledged, kept once); a forged or unsigned one is refused and
// not kept, an unsigned one before its body is read; a full quarantine answers 413 and counts it for the alert.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { createInbox, type Inbox } from '../../src/inbox/inbox.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import { createQuarantineMetrics } from '../../src/metrics/quarantine-metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createReceiverRouter } from '../../src/receiver/router.ts';
import { SEALED_PREFIX } from '../../src/sealing/format.ts';
import { createSealer, type Sealer } from '../../src/sealing/sealer.ts';
import { closeDatabase, type Db, openDatabase } from '../../src/sqlite/open.ts';
import type { QuarantineStore } from '../../src/storage/quarantine.ts';
import { QUARANTINE_BODY, sealContext } from '../../src/storage/sealed-contexts.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createSqliteQuarantineStore } from '../../src/storage/sqlite/quarantine.ts';
import { keySetOf } from '../sealing/builders.ts';
import { appointmentEventBody, type SignedWebhook, signedWebhook } from '../support/webhooks.ts';

const MiB = 1024 * 1024;
const LIMIT = 256 * 1024;
const MARKER_NAME = 'Plokmijn Oversizename';
const MARKER_PHONE = '+15550004321';

interface Fixture {
  url: string;
  db: Db;
  clock: ManualClock;
  metrics: Metrics;
  inbox: Inbox;
  quarantine: QuarantineStore;
  sealer: Sealer;
  close(): Promise<void>;
}

const open: Fixture[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
});

async function fixture(capacityBytes = 256 * MiB): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-quarantine-intake-'));
  const db = openDatabase({ path: join(dir, 'adapter.db'), migrationsDir: ADAPTER_MIGRATIONS });
  const clock = createManualClock();
  const logger = silentLogger();
  const metrics = createMetrics();
  const sealer = createSealer(await keySetOf('k-a'));
  const inbox = createInbox({ store: createSqliteInboxStore(db), clock, logger, sealer });
  const quarantine = createSqliteQuarantineStore(db, clock, sealer);
  const receiver = createReceiverRouter({
    inbox,
    clock,
    logger,
    metrics,
    keyId: () => 'key_test_0001',
    secrets: () => ['whsec_test_secret_0001'],
    toleranceSeconds: 300,
    maxBodyBytes: LIMIT,
    quarantine: { store: quarantine, capacityBytes, metrics: createQuarantineMetrics(metrics, { usage: () => quarantine.usage(), capacityBytes }) },
  });
  const app = createApp({ logger, metrics, routers: [receiver], adminRouters: [], adminToken: 'admin-token-for-tests-0001', readiness: [] });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const f: Fixture = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/service`,
    db,
    clock,
    metrics,
    inbox,
    quarantine,
    sealer,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await inbox.close();
      await closeDatabase(db);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  open.push(f);
  return f;
}

/** A signed appointment webhook of about `size` bytes whose patient carries the markers. */
function oversized(f: Fixture, size = 2 * MiB, opts: Parameters<typeof signedWebhook>[1] = {}): SignedWebhook & { eventId: string } {
  const event = appointmentEventBody() as Record<string, unknown> & { patient: Record<string, unknown>; appointment: Record<string, unknown> };
  const body = {
    ...event,
    patient: { ...event.patient, name: MARKER_NAME, phone: MARKER_PHONE },
    appointment: { ...event.appointment, notes: 'n'.repeat(size - 900) },
  };
  return { ...signedWebhook(f.clock.now(), { body, ...opts }), eventId: String(event.eventId) };
}

async function post(f: Fixture, w: SignedWebhook, opts: { chunked?: boolean } = {}) {
  const res = await fetch(f.url, {
    method: 'POST',
    headers: w.headers,
    // A stream has no Content-Length: fetch sends it chunked.
    body: opts.chunked ? new Blob([w.body]).stream() : w.body,
    ...(opts.chunked ? { duplex: 'half' } : {}),
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const counter = async (f: Fixture, name: string, labels = ''): Promise<number> => {
  const text = await f.metrics.registry.metrics();
  const m = new RegExp(`^${name}${labels ? `\\{${labels}\\}` : ''} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
};

const inboxRows = (f: Fixture) => f.db.prepare('SELECT event_id FROM inbox_events').all();
const quarantineRows = (f: Fixture) => f.db.prepare('SELECT event_id, size, state FROM webhook_quarantine').all();

describe('a signed webhook over WEBHOOK_MAX_BODY_BYTES', () => {
  it('is kept in the quarantine, sealed, and answered 202; the inbox holds nothing of it', async () => {
    const f = await fixture();
    const w = oversized(f);
    expect(w.body.length).toBeGreaterThan(2 * MiB - 1000);
    const res = await post(f, w);
    expect(res).toEqual({ status: 202, body: { received: true, duplicate: false, quarantined: true } });
    expect(inboxRows(f)).toEqual([]);
    expect(quarantineRows(f)).toEqual([{ event_id: w.eventId, size: w.body.length, state: 'quarantined' }]);
    const raw = f.db.prepare('SELECT body FROM webhook_quarantine WHERE event_id = ?').pluck().get(w.eventId) as Buffer;
    expect(raw.toString('latin1').startsWith(SEALED_PREFIX)).toBe(true);
    expect(raw.includes(MARKER_NAME)).toBe(false);
    expect(raw.includes(MARKER_PHONE)).toBe(false);
    expect(f.sealer.open(raw, sealContext(QUARANTINE_BODY, w.eventId)).equals(w.body)).toBe(true);
    expect((await f.quarantine.get(w.eventId))?.headers).toMatchObject({ 'x-service-event-id': w.eventId, 'x-service-delivery-attempt': '1' });
    expect(await counter(f, 'emr_bridge_webhook_quarantined_total')).toBe(1);
    expect(await counter(f, 'emr_bridge_webhook_quarantine_events')).toBe(1);
  });

  it('acknowledges a repeat of a quarantined eventId and keeps it once', async () => {
    const f = await fixture();
    const w = oversized(f);
    await post(f, w);
    const again = signedWebhook(f.clock.now(), { body: w.body, attempt: 2, headers: { 'x-service-event-id': w.eventId } });
    expect(await post(f, again)).toEqual({ status: 202, body: { received: true, duplicate: true, quarantined: true } });
    expect(quarantineRows(f)).toHaveLength(1);
    expect(await counter(f, 'emr_bridge_webhook_quarantined_total')).toBe(1);
  });

  it('answers a repeat of an eventId the inbox holds as a duplicate, as below the limit, and keeps nothing', async () => {
    const f = await fixture();
    const small = signedWebhook(f.clock.now());
    const id = JSON.parse(small.body.toString()).eventId as string;
    expect((await post(f, small)).status).toBe(200);
    const big = oversized(f, 2 * MiB, { headers: { 'x-service-event-id': id } });
    expect(await post(f, big)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(quarantineRows(f)).toEqual([]);
  });

  it('is kept when it comes without Content-Length (chunked), found over the limit while read', async () => {
    const f = await fixture();
    const w = oversized(f);
    expect(await post(f, w, { chunked: true })).toEqual({ status: 202, body: { received: true, duplicate: false, quarantined: true } });
    const raw = f.db.prepare('SELECT body FROM webhook_quarantine WHERE event_id = ?').pluck().get(w.eventId) as Buffer;
    expect(f.sealer.open(raw, sealContext(QUARANTINE_BODY, w.eventId)).equals(w.body)).toBe(true);
    // Below the limit, chunked still goes to the inbox.
    const small = signedWebhook(f.clock.now());
    expect((await post(f, small, { chunked: true })).status).toBe(200);
    expect(inboxRows(f)).toHaveLength(1);
  });

  it('answers 413 when the quarantine has no room for it, keeps nothing and counts it for the alert', async () => {
    const f = await fixture(3 * MiB);
    const first = oversized(f);
    expect((await post(f, first)).status).toBe(202);
    const second = oversized(f);
    const res = await post(f, second);
    expect(res).toEqual({ status: 413, body: { error: { code: 'payload_too_large', message: expect.stringContaining('quarantine has no room') } } });
    expect(quarantineRows(f).map((r) => (r as { event_id: string }).event_id)).toEqual([first.eventId]);
    expect(await counter(f, 'emr_bridge_webhook_quarantine_full_total')).toBe(1);
    // A forged one meanwhile is refused for its signature, not counted as a full quarantine.
    expect((await post(f, oversized(f, 2 * MiB, { secrets: ['not the secret'] }))).status).toBe(401);
    expect(await counter(f, 'emr_bridge_webhook_quarantine_full_total')).toBe(1);
    // Room again once the first is dismissed.
    await f.quarantine.dismiss(first.eventId, 'checked', 'ops');
    expect((await post(f, second)).status).toBe(202);
  });

  it('answers 413 as before when the quarantine is off (WEBHOOK_QUARANTINE_BYTES=0)', async () => {
    const f = await fixture(0);
    expect((await post(f, oversized(f))).status).toBe(413);
    expect(quarantineRows(f)).toEqual([]);
  });
});

describe('a forged or unsigned webhook over WEBHOOK_MAX_BODY_BYTES', () => {
  it.each([
    ['a wrong secret', { secrets: ['not the secret'] }, 'bad_signature'],
    ['no signature headers', { headers: { 'x-service-signature': undefined, 'x-service-timestamp': undefined } }, 'missing_header'],
    ['an unknown key id', { keyId: 'key_other' }, 'unknown_key'],
  ] as const)('is refused (401) and not kept: %s', async (_name, opts, reason) => {
    const f = await fixture();
    const res = await post(f, oversized(f, 2 * MiB, opts as Parameters<typeof signedWebhook>[1]));
    expect(res).toEqual({ status: 401, body: { error: { code: 'invalid_signature', message: 'signature verification failed' } } });
    expect(quarantineRows(f)).toEqual([]);
    expect(inboxRows(f)).toEqual([]);
    expect(await counter(f, 'emr_bridge_webhook_events_rejected_total', `reason="${reason}"`)).toBe(1);
    expect(await counter(f, 'emr_bridge_webhook_quarantined_total')).toBe(0);
  });

  it('is answered before its body is read when a signature header fails, and the connection is closed', async () => {
    const f = await fixture();
    const w = oversized(f, 2 * MiB, { headers: { 'x-service-signature': undefined } });
    // Only the first KiB is sent: the answer must come without the rest.
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = http.request(f.url, { method: 'POST', headers: { ...w.headers, 'content-length': String(w.body.length) } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, connection: res.headers.connection });
        req.destroy();
      });
      req.on('error', reject);
      req.write(w.body.subarray(0, 1024));
    });
    expect(answer).toEqual({ status: 401, connection: 'close' });
    expect(quarantineRows(f)).toEqual([]);
  });

  it('is refused with 413, unread, when it declares more than WEBHOOK_MAX_BODY_BYTES could ever be raised to', async () => {
    const f = await fixture();
    const w = oversized(f, 2 * MiB);
    const answer = await new Promise<number>((resolve, reject) => {
      const req = http.request(f.url, { method: 'POST', headers: { ...w.headers, 'content-length': String(17 * MiB) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', reject);
      req.write(w.body.subarray(0, 1024));
    });
    expect(answer).toBe(413);
    expect(quarantineRows(f)).toEqual([]);
  });
});
