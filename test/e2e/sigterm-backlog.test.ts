// SIGTERM while `serve` drains a backlog into the bundled FHIR server (behind a 20 ms proxy, so that the backlog
// is still there when the signal comes): it exits 0 with the events in flight finished or handed back, and `serve`
// started again on the same data folder applies the rest. Every acknowledged event ends applied, each appointment
// is in the EMR once, and nothing is applied twice (the FHIR server holds as many appointments as were booked).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { afterAll, expect, it } from 'vitest';
import { type Child, ROOT, startChild } from '../../bench/support/child.ts';
import { type LatencyProxy, startHttpLatencyProxy } from '../../bench/support/latency-proxy.ts';
import { waitFor } from '../support/wait.ts';
import { appointmentEventBody, signedWebhook, TEST_KEY_ID, TEST_SECRET } from '../support/webhooks.ts';

const EVENTS = 400;
const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-sigterm-backlog-'));
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** The service's mapping API as far as the processor uses it: the benchmarks' bare node:http, 200 to every call. */
async function serviceStandIn(): Promise<string> {
  const service = await startChild(['bin/run-ts.js', 'bench/support/bare-server.ts']);
  closers.push(() => service.stop('SIGKILL'));
  return service.url;
}

async function serve(env: Record<string, string>): Promise<Child> {
  // Its data folder as working directory: no .env from the checkout is read.
  const child = await startChild([join(ROOT, 'bin/emr-bridge.js'), 'serve'], { env, cwd: dir, timeoutMs: 60_000 });
  closers.push(() => child.stop('SIGKILL'));
  return child;
}

/** Events in a final state, and those applied, read as the bench reads them (a read-only connection). */
function finished(): { final: number; applied: number } {
  const db = new Database(join(dir, 'emr-bridge.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        "SELECT count(*) FILTER (WHERE state IN ('applied', 'discarded_stale', 'dead')) AS final, count(*) FILTER (WHERE state = 'applied') AS applied FROM processing",
      )
      .get() as { final: number; applied: number };
  } finally {
    db.close();
  }
}

it('exits 0 on SIGTERM in the middle of a backlog, and once started again applies every acknowledged event, each once', async () => {
  const fhir = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0'], { env: { LOG_LEVEL: 'silent' }, timeoutMs: 60_000 });
  closers.push(() => fhir.stop('SIGKILL'));
  const proxy: LatencyProxy = await startHttpLatencyProxy(fhir.url, { delayMs: 20 });
  closers.push(() => proxy.close());
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    FHIR_BASE_URL: proxy.url,
    FHIR_AUTH: 'none',
    SERVICE_BASE_URL: await serviceStandIn(),
    SERVICE_API_KEY: 'sigterm-backlog-key',
    SERVICE_KEY_ID: TEST_KEY_ID,
    SERVICE_SIGNING_SECRETS: TEST_SECRET,
    ADMIN_TOKEN: 'sigterm-backlog-admin-0001',
    EMR_MAX_CONCURRENCY: '4',
    PUSHER_SCAN_CRON: '0 0 1 1 *',
    LOG_LEVEL: 'warn',
  };
  const first = await serve(env);

  // The backlog: every delivery an appointment and a patient of its own, acknowledged before the signal.
  const pool = new Pool(first.url, { connections: 16 });
  const acknowledged: string[] = [];
  let next = 0;
  const send = async () => {
    while (next < EVENTS) {
      const i = next++;
      const base = appointmentEventBody();
      const body: Record<string, unknown> = {
        ...base,
        appointment: { ...(base.appointment as object), serviceId: `apt_sigterm_${i}` },
        patient: { ...(base.patient as object), serviceId: `pat_sigterm_${i}` },
      };
      const w = signedWebhook(Date.now(), { body });
      const res = await pool.request({ path: '/webhooks/service', method: 'POST', headers: w.headers, body: w.body });
      await res.body.text();
      if (res.statusCode === 200) acknowledged.push(String(body.eventId));
    }
  };
  await Promise.all(Array.from({ length: 16 }, send));
  await pool.close();
  expect(acknowledged).toHaveLength(EVENTS);

  await waitFor(() => (finished().final >= 20 ? true : undefined), 30_000);
  expect(await first.stop('SIGTERM')).toBe(0);
  const atStop = finished();
  expect(atStop.final).toBeLessThan(EVENTS);

  const second = await serve(env);
  await waitFor(() => (finished().final >= EVENTS ? true : undefined), 60_000, 200);
  expect(await second.stop('SIGTERM')).toBe(0);

  const db = new Database(join(dir, 'emr-bridge.db'), { readonly: true });
  const inbox = db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM inbox_events').get();
  const states = db.prepare('SELECT state, count(*) AS n FROM processing GROUP BY state').all();
  db.close();
  expect(inbox).toEqual({ rows: EVENTS, ids: EVENTS });
  expect(states).toEqual([{ state: 'applied', n: EVENTS }]);
  const total = (await (await fetch(`${fhir.url}/Appointment?_summary=count`)).json()) as { total: number };
  expect(total.total).toBe(EVENTS);
}, 120_000);
