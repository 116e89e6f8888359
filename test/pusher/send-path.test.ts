// How the pusher's send path does its work with few commits and without rewriting or re-reading requests,
// keeping its guarantees: sends that end together are recorded in one commit with the next claim; a claim
// overwrites the row in place (not its request); rows in flight are not due; rows claimed and not sent are
// given back; a send that outlives its lease is not started twice; a row that waited past half its lease is
// given back, not sent; a retry or give-back never touches a lease taken since; a request enqueued here is
// sent without being read back; a pass goes on while a full batch leaves more; once started, new documents
// are sent without waiting for a pause. (The scan's own: ./scan.test.ts.)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { closeDatabase } from '../../src/sqlite/open.ts';
import type { DocumentRequest, DocumentResource } from '../../src/contract/documents.ts';
import type { EmrDocument } from '../../src/emr/port.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { createPusher } from '../../src/pusher/index.ts';
import type { SendEnd } from '../../src/storage/documents.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { waitFor } from '../support/wait.ts';
import { openTestDatabase, sqlitePusherStores } from './sqlite-stores.ts';

const sent = (externalId: string): DocumentResource => ({
  type: 'document',
  documentType: 'lab_report',
  serviceId: `doc_${externalId}`,
  externalId,
  patientServiceId: 'pat_1',
  status: 'SENT',
  sentAt: '2026-01-15T10:00:00.000Z',
  action: 'received',
});

const request = (externalId: string, base64 = PDF.toString('base64')) => ({
  externalId,
  patientPhone: '+15550001111',
  patientName: 'Synthetic Patient',
  label: 'Blood count',
  file: { base64, filename: 'blood.pdf' },
});

const emrDoc = (id: string, base64 = PDF.toString('base64')): EmrDocument => ({
  id,
  version: '1',
  documentType: 'lab_report',
  label: 'CBC',
  filename: 'cbc.pdf',
  content: { base64 },
  patient: { id: 'emr-patient-1', serviceId: 'pat_1' },
  lastUpdated: '2026-01-15T09:00:00.000Z',
});

/** A service whose answers the test releases: each post waits until `answer()` lets it through. */
function heldService() {
  const posts: { externalId: string; body: DocumentRequest }[] = [];
  const waiting: { externalId: string; release: () => void }[] = [];
  return {
    posts,
    waiting: () => waiting.map((w) => w.externalId),
    /** Lets the waiting posts of these externalIds (all, when none is named) through, in one go. */
    answer(...ids: string[]) {
      for (const w of [...waiting]) {
        if (ids.length && !ids.includes(w.externalId)) continue;
        waiting.splice(waiting.indexOf(w), 1);
        w.release();
      }
    },
    client: {
      async postDocument(_type: string, body: DocumentRequest) {
        posts.push({ externalId: body.externalId, body });
        await new Promise<void>((release) => waiting.push({ externalId: body.externalId, release }));
        return { httpStatus: 201, replayed: false, resource: sent(body.externalId) };
      },
      async getDocument() {
        return undefined;
      },
    },
  };
}

function fixture(opts: { env?: Record<string, string>; path?: string; clock?: ManualClock; emr?: MemoryEmr } = {}) {
  const db = openTestDatabase(opts.path);
  const clock = opts.clock ?? createManualClock();
  const emr = opts.emr ?? createMemoryEmr();
  const service = heldService();
  const pusher = createPusher({
    ...sqlitePusherStores(db, clock),
    clock,
    logger: silentLogger(),
    emr,
    random: () => 0.5,
    config: parseConfig(opts.env ?? {}),
    serviceClient: service.client,
  });
  // Every commit of the send path goes through settle: counted here (the sender calls it on this object).
  const settles: SendEnd[][] = [];
  const settle = pusher.outbox.settle;
  pusher.outbox.settle = (ended, limit, leaseMs) => {
    if (ended.length) settles.push([...ended]);
    return settle(ended, limit, leaseMs);
  };
  return { db, clock, emr, service, pusher, settles, row: async (id: string) => (await pusher.outbox.get(id))! };
}

/** Lets the pass run until it waits again (on the service). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the send path', () => {
  it('records the answers that arrive together in one commit, and claims the next rows in it', async () => {
    const f = fixture({ env: { PUSHER_CONCURRENCY: '4' } });
    for (let i = 0; i < 10; i++) await f.pusher.enqueue('lab_report', request(`lab-${i}`));
    const pass = f.pusher.runOnce();
    await settled();
    // Four in flight, four more claimed to start as places free up.
    expect(f.service.waiting()).toHaveLength(4);
    expect((await f.row('lab-4')).lease_until).toBeGreaterThan(f.clock.now());
    f.service.answer();
    await settled();
    // The four answers, one commit; the four claimed rows started at once.
    expect(f.settles).toHaveLength(1);
    expect(f.settles[0]!.map((e) => e.externalId)).toEqual(['lab-0', 'lab-1', 'lab-2', 'lab-3']);
    expect(f.service.waiting()).toEqual(['lab-4', 'lab-5', 'lab-6', 'lab-7']);
    while (f.service.waiting().length) {
      f.service.answer();
      await settled();
    }
    expect(await pass).toBe(10);
    expect(await f.pusher.outbox.list('SENT', 20)).toHaveLength(10);
    expect(f.settles.length).toBeLessThanOrEqual(4);
    expect(f.service.posts.map((p) => p.externalId).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `lab-${i}`).sort());
  });

  it('overwrites a claimed row in place: its request is not written again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-send-path-'));
    dirs.push(dir);
    // No checkpoints at all (no worker thread, none inside commits): the WAL grows by what each write wrote.
    const db = openTestDatabase(join(dir, 'adapter.db'), { checkpoints: false });
    db.pragma('wal_autocheckpoint = 0');
    const outbox = createSqliteDocumentStore(db, createManualClock());
    const walPages = () => statSync(join(dir, 'adapter.db-wal')).size / 4096;
    const big = Buffer.concat([PDF, Buffer.alloc(200 * 1024, 0x20)]).toString('base64');
    let before = walPages();
    await outbox.enqueue({ externalId: 'big', documentType: 'lab_report', source: 'api', request: request('big', big) as DocumentRequest });
    const written = walPages() - before;
    expect(written).toBeGreaterThan(60);
    before = walPages();
    expect(await outbox.claimDue(1, 60_000)).toHaveLength(1);
    expect(walPages() - before).toBeLessThan(8);
    db.close();
  });

  it('holds rows in flight out of the due ones until their lease runs out, and frees them at once on a restart', async () => {
    const f = fixture();
    await f.pusher.enqueue('lab_report', request('lab-1'));
    const [claimed] = await f.pusher.outbox.claimDue(1, 60_000);
    expect(claimed!.attempts).toBe(1);
    expect(await f.row('lab-1')).toMatchObject({ lease_until: f.clock.now() + 60_000, next_attempt_at: f.clock.now() + 60_000 });
    expect(await f.pusher.outbox.anyDue()).toBe(false);
    expect(await f.pusher.recover()).toBe(1);
    expect((await f.row('lab-1')).next_attempt_at).toBeLessThanOrEqual(f.clock.now());
    expect(await f.pusher.outbox.anyDue()).toBe(true);
    expect(await f.pusher.recover()).toBe(0);
  });

  it('gives back, on stop, the rows it claimed and did not send: due again, the attempt not counted', async () => {
    const f = fixture({ env: { PUSHER_CONCURRENCY: '2' } });
    for (let i = 0; i < 6; i++) await f.pusher.enqueue('lab_report', request(`lab-${i}`));
    const pass = f.pusher.runOnce();
    await settled();
    expect(f.service.waiting()).toEqual(['lab-0', 'lab-1']);
    const stopped = f.pusher.stop();
    f.service.answer();
    await pass;
    await stopped;
    expect(f.service.posts).toHaveLength(2);
    expect((await f.row('lab-0')).state).toBe('SENT');
    for (const id of ['lab-2', 'lab-3']) expect(await f.row(id)).toMatchObject({ state: 'queued', attempts: 0, lease_until: f.clock.now() });
    expect((await f.pusher.outbox.claimDue(10, 60_000)).map((r) => r.external_id).sort()).toEqual(['lab-2', 'lab-3', 'lab-4', 'lab-5']);
  });

  it('does not start a send again while it is in flight, even once its lease has run out', async () => {
    const f = fixture({ env: { PUSHER_CONCURRENCY: '2', PUSHER_LEASE_MS: '1000', SERVICE_TIMEOUT_MS: '500' } });
    for (const id of ['a', 'b', 'c']) await f.pusher.enqueue('lab_report', request(id));
    const pass = f.pusher.runOnce();
    await settled();
    expect(f.service.waiting()).toEqual(['a', 'b']);
    f.clock.advance(5_000); // a's lease has run out; it is still in flight
    f.service.answer('b');
    await settled();
    f.service.answer('c');
    await settled();
    expect(f.service.waiting()).toEqual(['a']);
    f.service.answer('a');
    await pass;
    expect(f.service.posts.map((p) => p.externalId)).toEqual(['a', 'b', 'c']);
    expect((await f.row('a')).state).toBe('SENT');
  });

  it('gives back a claimed row that waited past half its lease, and sends it on a fresh lease', async () => {
    const f = fixture({ env: { PUSHER_CONCURRENCY: '1', PUSHER_LEASE_MS: '1000', SERVICE_TIMEOUT_MS: '500' } });
    for (const id of ['a', 'b']) await f.pusher.enqueue('lab_report', request(id));
    const pass = f.pusher.runOnce();
    await settled();
    expect(f.service.waiting()).toEqual(['a']); // b claimed with it, waiting for the place
    f.clock.advance(600); // b has 400 ms of its lease left: too little to start a send on
    f.service.answer('a');
    await settled();
    expect(f.settles[0]).toContainEqual({ externalId: 'b', leaseUntil: f.clock.now() + 400, unsent: true });
    expect(f.service.waiting()).toEqual(['b']);
    expect((await f.row('b')).lease_until).toBe(f.clock.now() + 1000);
    f.service.answer('b');
    await pass;
    expect(f.service.posts.map((p) => p.externalId)).toEqual(['a', 'b']);
    expect(await f.row('b')).toMatchObject({ state: 'SENT', attempts: 1 });
  });

  it('leaves a lease taken by another sender as it is: a retry or give-back names the lease it was claimed with', async () => {
    const f = fixture();
    await f.pusher.enqueue('lab_report', request('lab-1'));
    const [first] = await f.pusher.outbox.claimDue(1, 1_000);
    f.clock.advance(1_000); // the first lease ran out; another sender claims the row
    const [second] = await f.pusher.outbox.claimDue(1, 60_000);
    const retry = { at: f.clock.now() + 5_000, code: 'service_unreachable', reason: 'timeout' };
    await f.pusher.outbox.settle(
      [
        { externalId: 'lab-1', leaseUntil: first!.lease_until!, retry },
        { externalId: 'lab-1', leaseUntil: first!.lease_until!, unsent: true },
      ],
      0,
      60_000,
    );
    expect(await f.row('lab-1')).toMatchObject({ lease_until: second!.lease_until, next_attempt_at: second!.lease_until, attempts: 2, error_code: null });
  });

  it('sends a request enqueued here as it was checked, and one stored before a restart as it was stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-send-path-'));
    dirs.push(dir);
    const path = join(dir, 'adapter.db');
    const first = fixture({ path });
    const checked = await first.pusher.enqueue('lab_report', request('lab-1'));
    await first.pusher.enqueue('lab_report', request('lab-2'));
    expect(checked.ok).toBe(true);
    const stored = JSON.parse((await first.row('lab-1')).request!) as DocumentRequest;
    expect(stored.file.mimeType).toBe('application/pdf');
    // The request kept in memory is the one sent: the same object, not the stored text parsed again.
    const kept = await first.pusher.outbox.requestOf('lab-1');
    expect(kept).toEqual(stored);
    expect(await first.pusher.outbox.requestOf('lab-1')).toEqual(stored); // taken once; then read back
    await closeDatabase(first.db);

    // Restarted: nothing in memory, each request read back as stored.
    const second = fixture({ path });
    const storedNow = await Promise.all(['lab-1', 'lab-2'].map(async (id) => JSON.parse((await second.row(id)).request!) as DocumentRequest));
    const pass = second.pusher.runOnce();
    await settled();
    second.service.answer();
    await pass;
    expect(second.service.posts.map((p) => p.body).sort((a, b) => a.externalId.localeCompare(b.externalId))).toEqual(storedNow);
    await closeDatabase(second.db);
  });

  it('keeps at most the memory it is given for requests, dropping the oldest', async () => {
    const outbox = createSqliteDocumentStore(openTestDatabase(), createManualClock(), {
      requestMemoryChars: 3 * JSON.stringify(request('lab-0')).length + 100,
    });
    const requests = Array.from({ length: 5 }, (_, i) => request(`lab-${i}`) as DocumentRequest);
    for (const r of requests) await outbox.enqueue({ externalId: r.externalId, documentType: 'lab_report', source: 'api', request: r });
    // The three newest are held (the very objects enqueued); the two oldest are read back from the outbox.
    expect(await outbox.requestOf('lab-4')).toBe(requests[4]);
    expect(await outbox.requestOf('lab-2')).toBe(requests[2]);
    expect(await outbox.requestOf('lab-0')).not.toBe(requests[0]);
    expect(await outbox.requestOf('lab-0')).toEqual(requests[0]);
    await outbox.recordOutcome('lab-3', { state: 'SENT', resource: sent('lab-3') });
    expect(await outbox.requestOf('lab-3')).toBe(requests[3]);
    expect(await outbox.requestOf('lab-3')).toBeNull();
  });
});

describe('passes', () => {
  it('go on while a full batch of write-backs leaves more', async () => {
    const f = fixture({ env: { PUSHER_HELD_POLL_BATCH: '2' } });
    for (let i = 0; i < 5; i++) f.emr.documents.push(emrDoc(`dr-${i}`));
    expect(await f.pusher.scanOnce()).toBe(5);
    const pass = f.pusher.runOnce();
    await settled();
    f.service.answer();
    await pass;
    for (let i = 0; i < 5; i++) expect(f.emr.outcomes.get(`dr-${i}`)?.map((o) => o.status)).toEqual(['SENT']);
    expect(await f.pusher.depth()).toBe(0);
  });

  it('once started, send a new document at once, not after the pause', async () => {
    const f = fixture({ env: { PUSHER_POLL_MS: '600000' } });
    f.pusher.start();
    await settled();
    await f.pusher.enqueue('lab_report', request('lab-1'));
    await waitFor(() => f.service.waiting().length === 1, 2_000, 5);
    f.service.answer();
    await waitFor(async () => (await f.row('lab-1')).state === 'SENT', 2_000, 5);
    f.emr.documents.push(emrDoc('dr-1'));
    await f.pusher.scanOnce();
    await waitFor(() => f.service.waiting().length === 1, 2_000, 5);
    f.service.answer();
    await f.pusher.stop();
    expect((await f.row('dr-1')).state).toBe('SENT');
  });
});
