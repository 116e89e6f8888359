// Receiver benchmark (issue "Foundation and the durable webhook receiver"): unique, freshly signed 1.5 KB
// appointment.created bodies at concurrency 50, against (a) a bare node:http server that reads the body
// and answers 200 and (b) the receiver with its durable inbox (WAL, synchronous=FULL, group commit), in
// the same run. Target: (b) reaches at least 0.5 of (a)'s requests/s with p99 under 25 ms, and the
// inbox holds every acknowledged event.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startChild } from '../test/support/child.ts';
import { appointmentEventBody, signedWebhook } from '../test/support/webhooks.ts';
import { readFileSync } from 'node:fs';
import { runLoad, type LoadResult } from './support/load.ts';

/** CPU seconds (user + system, all threads) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const CONCURRENCY = 50;
const REQUESTS = 20_000;
const MAX_SECONDS = 15;

function body1500(): Record<string, unknown> {
  const b = appointmentEventBody({ eventId: randomUUID() });
  const size = Buffer.byteLength(JSON.stringify(b));
  (b.appointment as Record<string, unknown>).notes = 'n'.repeat(Math.max(0, 1536 - size + 26));
  return b;
}

async function measure(script: string, args: string[], onAck?: (eventId: string) => void): Promise<LoadResult & { cpuUsPerRequest: number }> {
  const child = await startChild(['bin/run-ts.js', script, ...args]);
  try {
    const eventIds: string[] = [];
    // Warm-up: connections, JIT, the database file.
    await runLoad({ url: child.url, path: '/webhooks/service', concurrency: CONCURRENCY, requests: 1_000, maxSeconds: 5, build: () => signedWebhook(Date.now(), { body: body1500() }), ...(onAck ? { onOk: () => undefined } : {}) });
    const cpu0 = cpuSeconds(child.proc.pid!);
    const result = await runLoad({
      url: child.url,
      path: '/webhooks/service',
      concurrency: CONCURRENCY,
      requests: REQUESTS,
      maxSeconds: MAX_SECONDS,
      build: (i) => {
        const b = body1500();
        eventIds[i] = String(b.eventId);
        return signedWebhook(Date.now(), { body: b });
      },
      onOk: (i) => onAck?.(eventIds[i]!),
    });
    return { ...result, cpuUsPerRequest: ((cpuSeconds(child.proc.pid!) - cpu0) * 1e6) / result.ok };
  } finally {
    await child.stop('SIGTERM');
  }
}

export async function benchReceiver(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-receiver-'));
  const dbPath = join(dir, 'adapter.db');
  try {
    const bare = await measure('bench/support/bare-server.ts', []);
    const acknowledged: string[] = [];
    const receiver = await measure('test/support/receiver-process.ts', [dbPath, '0'], (id) => acknowledged.push(id));

    const db = new Database(dbPath, { readonly: true });
    const has = db.prepare('SELECT 1 FROM inbox_events WHERE event_id = ?').pluck();
    const missing = acknowledged.filter((id) => !has.get(id)).length;
    db.close();

    const ratio = receiver.rps / bare.rps;
    const ok = ratio >= 0.5 && receiver.p99ms < 25 && missing === 0;
    const row = (name: string, r: LoadResult & { cpuUsPerRequest: number }) => ({
      server: name,
      'requests/s': Math.round(r.rps),
      'p50 ms': r.p50ms.toFixed(2),
      'p99 ms': r.p99ms.toFixed(2),
      'server CPU µs/req': Math.round(r.cpuUsPerRequest),
      acknowledged: r.ok,
      errors: r.errors,
    });
    return {
      ok,
      rows: [
        row('bare node:http (baseline)', bare),
        row('receiver + durable inbox', receiver),
        {
          server: 'ratio receiver/bare',
          'requests/s': ratio.toFixed(2),
          'p50 ms': '',
          'p99 ms': `target < 25`,
          'server CPU µs/req': '',
          acknowledged: `missing from inbox: ${missing}`,
          errors: ok ? 'PASS' : 'FAIL',
        },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
