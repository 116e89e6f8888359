// Durability of the acknowledgement: a receiver process under concurrent load is killed with SIGKILL;
// after a restart every event that got a 2xx is in the inbox, exactly once, with its exact bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { appointmentEventBody, signedWebhook, TEST_KEY_ID, TEST_SECRET } from '../support/webhooks.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-crash-'));
const dbPath = join(dir, 'adapter.db');
const children: Child[] = [];
afterAll(async () => {
  for (const c of children) await c.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function startReceiver(): Promise<Child> {
  const c = await startChild(['bin/run-ts.js', 'bench/support/receiver-process.ts', dbPath, '0'], {
    env: { SERVICE_KEY_ID: TEST_KEY_ID, SERVICE_SIGNING_SECRETS: TEST_SECRET },
  });
  children.push(c);
  return c;
}

describe('SIGKILL under load', () => {
  it('keeps every acknowledged event, exactly once', async () => {
    const first = await startReceiver();
    const pool = new Pool(first.url, { connections: 50 });
    const acknowledged = new Map<string, Buffer>();
    let sent = 0;
    let killed = false;

    async function worker(): Promise<void> {
      while (!killed && sent < 5_000) {
        sent++;
        const body = appointmentEventBody();
        const w = signedWebhook(Date.now(), { body });
        try {
          const res = await pool.request({ path: '/webhooks/service', method: 'POST', headers: w.headers, body: w.body });
          await res.body.text();
          if (res.statusCode === 200) acknowledged.set(String(body.eventId), w.body);
        } catch {
          // Connection reset by the kill: not acknowledged, so the service would retry it.
        }
        if (acknowledged.size >= 300 && !killed) {
          killed = true;
          first.proc.kill('SIGKILL');
        }
      }
    }
    await Promise.all(Array.from({ length: 50 }, worker));
    await first.stop('SIGKILL');
    await pool.close().catch(() => undefined);
    expect(acknowledged.size).toBeGreaterThanOrEqual(300);

    // The restarted receiver opens the same file (WAL recovery) and still recognises old events.
    const second = await startReceiver();
    const [someId, someBody] = [...acknowledged.entries()][0]!;
    const replay = signedWebhook(Date.now(), { body: JSON.parse(someBody.toString()) });
    const res = await fetch(`${second.url}/webhooks/service`, { method: 'POST', headers: replay.headers, body: replay.body });
    expect(await res.json()).toEqual({ received: true, duplicate: true });
    await second.stop('SIGTERM');

    const db = new Database(dbPath, { readonly: true });
    const rows = db.prepare('SELECT event_id, body FROM inbox_events').all() as { event_id: string; body: Buffer }[];
    db.close();
    const stored = new Map(rows.map((r) => [r.event_id, r.body]));
    expect(stored.size).toBe(rows.length);
    for (const [eventId, body] of acknowledged) {
      expect(stored.has(eventId), `acknowledged ${eventId} is stored`).toBe(true);
      expect(stored.get(eventId)!.equals(body)).toBe(true);
    }
    expect(someId).toBeTruthy();
  }, 60_000);
});
