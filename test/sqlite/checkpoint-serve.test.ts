// The checkpoint worker under `npm start` (node bin/emr-bridge.js serve, TypeScript through tsx's loader, which a
// worker thread does not inherit): it runs (the WAL is emptied once the adapter is idle, which SQLite's own
// checkpoints never do), it checkpoints what the receiver commits, and SIGTERM ends the process with nothing
// left running and the WAL folded into the database.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { appointmentEvent } from '../../bench/support/events.ts';
import { KEY_ID, SECRET, startServer, WEBHOOK_PATH } from '../../bench/receiver-wrk.ts';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';
import { waitFor } from '../support/wait.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const walBytes = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe('checkpoints in `emr-bridge serve`', () => {
  it('run on their worker thread under the CLI, checkpoint what the receiver commits, and end with the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-checkpoint-serve-'));
    dirs.push(dir);
    const { child, dbPath } = await startServer('serve', dir);
    const path = dbPath!;
    let code: number | null;
    try {
      // Start-up wrote to the WAL (the schema, the store probe); idle, the worker empties it.
      await waitFor(() => walBytes(path) === 0 && existsSync(path), 15_000);
      for (let i = 0; i < 20; i++) {
        const event = appointmentEvent();
        const body = Buffer.from(JSON.stringify(event));
        const headers = signedWebhookHeaders({
          keyId: KEY_ID,
          secrets: [SECRET],
          timestamp: Math.floor(Date.now() / 1000),
          body,
          eventId: event.eventId as string,
          eventType: event.eventType as string,
          attempt: 1,
        });
        const res = await fetch(`${child.url}${WEBHOOK_PATH}`, { method: 'POST', headers, body });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      expect(walBytes(path)).toBeGreaterThan(0);
      await waitFor(() => walBytes(path) === 0, 15_000);
    } finally {
      code = await child.stop('SIGTERM');
    }
    expect(code).toBe(0);
    // The worker, the last connection to close, folded the WAL into the database and removed it.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(20);
    db.close();
  });
});
