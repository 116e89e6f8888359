// `data-keys rotate` beside a running adapter under load (docs/data-at-rest.md): bodies sealed under key A, the
// adapter restarted with B current, webhooks flowing and the processor applying them while the command re-seals,
// killed with SIGKILL part-way and run again. Every acknowledged event is still stored, every body opens under B
// alone, and the command reports A as used by no value.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../bench/support/child.ts';
import { systemClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { type RunningAdapter, startAdapter } from '../../src/runtime/adapter.ts';
import { readKeyFileAt, writeKeyFile } from '../../src/sealing/key-source.ts';
import { generateKeyFile, importKeySet, withNewCurrentKey } from '../../src/sealing/keys.ts';
import { createSealer } from '../../src/sealing/sealer.ts';
import { INBOX_BODY, sealContext } from '../../src/storage/sealed-contexts.ts';
import { keyIdOfHead } from '../../src/storage/sealed-values.ts';
import { runCli } from '../support/cli.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-rotate-e2e-'));
const keyPath = join(dir, 'keys.json');
const env = { DATA_DIR: dir, DATA_KEYS_PATH: keyPath, DATABASE_PATH: '', SERVICE_BASE_URL: '', FHIR_BASE_URL: '', LOG_LEVEL: 'silent' };
let adapter: RunningAdapter | undefined;
afterAll(async () => {
  await adapter?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = async () =>
  startAdapter({ config: parseConfig({ PORT: '0', DATA_DIR: dir, DATA_KEYS_PATH: keyPath, PUSHER_SCAN_CRON: '0 0 1 1 *' }), logger: silentLogger() });

/** Posts one signed appointment event to the adapter; the eventId when acknowledged. */
async function post(a: RunningAdapter): Promise<string | undefined> {
  const eventId = randomUUID();
  const body = appointmentEventBody({ eventId }) as { appointment: Record<string, unknown> };
  body.appointment = { ...body.appointment, serviceId: `apt_${eventId.slice(0, 8)}` };
  const hook = signedWebhook(Date.now(), {
    body,
    keyId: a.keyId,
    secrets: a.signingSecrets,
  });
  const res = await fetch(a.webhookUrl, { method: 'POST', headers: hook.headers, body: hook.body });
  await res.arrayBuffer();
  return res.status < 300 ? eventId : undefined;
}

/** Four posters at a time until stopped; every eventId acknowledged. */
function load(a: RunningAdapter): { stop(): Promise<string[]> } {
  const acknowledged: string[] = [];
  let running = true;
  const workers = Array.from({ length: 4 }, async () => {
    while (running) {
      const id = await post(a);
      if (id) acknowledged.push(id);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      return acknowledged;
    },
  };
}

const kidsInDb = () => {
  const db = new Database(join(dir, 'emr-bridge.db'), { readonly: true });
  try {
    const heads = db.prepare('SELECT CAST(substr(body, 1, 1024) AS TEXT) AS head FROM inbox_events WHERE body IS NOT NULL').pluck().all() as string[];
    const counts: Record<string, number> = {};
    for (const h of heads) counts[keyIdOfHead(h)] = (counts[keyIdOfHead(h)] ?? 0) + 1;
    return counts;
  } finally {
    db.close();
  }
};

/** `data-keys rotate` as a child process, SIGKILLed as soon as it has written its first pages. */
function rotateAndKill(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['bin/emr-bridge.js', 'data-keys', 'rotate', '--page-size', '10'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      // A progress line with some re-sealed: kill it there, mid-way.
      if (/re-sealed [1-9]/.test(err)) child.kill('SIGKILL');
    });
    child.once('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(err) : reject(new Error(`rotate ended by itself (${code}) before the kill:\n${err}`)),
    );
  });
}

describe('data-keys rotate beside a running adapter under load', () => {
  it('re-seals every stored body under the new key, killed part-way and resumed, none lost, the old key reported unused', async () => {
    writeKeyFile(keyPath, generateKeyFile(systemClock));
    const kidA = readKeyFileAt(keyPath).keys[0].kid;
    adapter = await start();
    const before = load(adapter);
    // A backlog sealed under A (enough pages of 10 for the kill to land part-way).
    await new Promise((r) => setTimeout(r, 3000));
    const underA = await before.stop();
    await adapter.close();
    expect(underA.length).toBeGreaterThan(200);
    expect(kidsInDb()).toEqual({ [kidA]: underA.length });

    writeKeyFile(keyPath, withNewCurrentKey(readKeyFileAt(keyPath), systemClock), { overwrite: true });
    const kidB = readKeyFileAt(keyPath).keys[0].kid;
    adapter = await start();
    const during = load(adapter);
    await new Promise((r) => setTimeout(r, 500));

    await rotateAndKill();
    const cut = kidsInDb();
    expect(cut[kidA], 'killed part-way: some rows still under A').toBeGreaterThan(0);
    expect(cut[kidB], 'killed part-way: some rows under B').toBeGreaterThan(0);

    const resumed = await runCli(['data-keys', 'rotate'], env);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toContain(`key ${kidA} is no longer used by any stored value`);
    const underB = await during.stop();
    await adapter.close();
    adapter = undefined;

    const db = new Database(join(dir, 'emr-bridge.db'), { readonly: true });
    const rows = db.prepare('SELECT event_id AS eventId, body FROM inbox_events').all() as { eventId: string; body: Buffer | null }[];
    db.close();
    const stored = new Set(rows.map((r) => r.eventId));
    expect(
      [...underA, ...underB].filter((id) => !stored.has(id)),
      'acknowledged events missing',
    ).toEqual([]);
    expect(kidsInDb()).toEqual({ [kidB]: rows.filter((r) => r.body !== null).length });
    // B alone opens every body, each the event its row names.
    const onlyB = createSealer(await importKeySet({ keys: [readKeyFileAt(keyPath).keys[0]] }));
    for (const r of rows.filter((x) => x.body !== null)) {
      const plain = JSON.parse((await onlyB.open(r.body!, sealContext(INBOX_BODY, r.eventId))).toString('utf8')) as { eventId: string };
      expect(plain.eventId).toBe(r.eventId);
    }
  }, 120_000);
});
