// Receiver benchmark (issue "Foundation and the durable webhook receiver"): unique, freshly signed 1.5 KB
// appointment.created bodies at concurrency 50, against (a) a bare node:http server that reads the body
// and answers 200 and (b) the receiver with its durable inbox (WAL, synchronous=FULL, group commit), in
// the same run. Target: (b) reaches at least 0.5 of (a)'s requests/s with p99 under 25 ms, and the
// inbox holds every acknowledged event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { signedWebhookHeaders } from '../src/signature/webhook-signature.ts';
import { startChild } from './support/child.ts';
import { appointmentEvent } from './support/events.ts';
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

const KEY_ID = 'key_bench_0001';
const SECRET = 'whsec_bench_secret_0001';

/** A fresh appointment.created of about 1.5 KB, signed as the service sends it. */
function delivery1500(): { eventId: string; headers: Record<string, string>; body: Buffer } {
  const event = appointmentEvent();
  const size = Buffer.byteLength(JSON.stringify(event));
  event.appointment.notes = 'n'.repeat(Math.max(0, 1536 - size + String(event.appointment.notes).length));
  const body = Buffer.from(JSON.stringify(event));
  const eventId = String(event.eventId);
  const headers = signedWebhookHeaders({
    keyId: KEY_ID,
    secrets: [SECRET],
    timestamp: Math.floor(Date.now() / 1000),
    body,
    eventId,
    eventType: String(event.eventType),
    attempt: 1,
  });
  return { eventId, headers, body };
}

async function measure(script: string, args: string[], onAck?: (eventId: string) => void): Promise<LoadResult & { cpuUsPerRequest: number }> {
  const child = await startChild(['bin/run-ts.js', script, ...args], { env: { SERVICE_KEY_ID: KEY_ID, SERVICE_SIGNING_SECRETS: SECRET } });
  try {
    const eventIds: string[] = [];
    // Warm-up: connections, JIT, the database file.
    await runLoad({
      url: child.url,
      path: '/webhooks/service',
      concurrency: CONCURRENCY,
      requests: 1_000,
      maxSeconds: 5,
      build: () => delivery1500(),
      ...(onAck ? { onOk: () => undefined } : {}),
    });
    const cpu0 = cpuSeconds(child.proc.pid!);
    const result = await runLoad({
      url: child.url,
      path: '/webhooks/service',
      concurrency: CONCURRENCY,
      requests: REQUESTS,
      maxSeconds: MAX_SECONDS,
      build: (i) => {
        const d = delivery1500();
        eventIds[i] = d.eventId;
        return d;
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
    const receiver = await measure('bench/support/receiver-process.ts', [dbPath, '0'], (id) => acknowledged.push(id));

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
