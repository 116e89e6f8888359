// A processor whose every pass fails (here: its table gone from under it) while the receiver goes on
// acknowledging: /readyz says the workers are failing (503), so that nobody takes the acknowledgments for work
// being done; once a pass succeeds again it is ready, and what was acknowledged meanwhile is applied.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter } from '../../src/runtime/adapter.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { appointmentEventBody, signedWebhook, TEST_KEY_ID, TEST_SECRET } from '../support/webhooks.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Ready = { status: number; body: { status: string; checks: Record<string, string> } };

it('says it is not ready while every processor pass fails, though webhooks are still acknowledged, and ready again once one succeeds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-failing-processor-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const emr = createMemoryEmr();
  const adapter = await startAdapter({
    config: quietAdapterConfig(dir, 'failing-processor-admin-0001', {
      SERVICE_KEY_ID: TEST_KEY_ID,
      SERVICE_SIGNING_SECRETS: TEST_SECRET,
      PROCESSOR_POLL_MS: '50',
      DATA_ENCRYPTION: 'off',
    }),
    logger: silentLogger(),
    emr,
  });
  cleanups.push(() => adapter.close());
  const readyz = () => json('GET', `${adapter.url}/readyz`) as Promise<Ready>;
  expect((await readyz()).body.checks.workers).toBe('ok');

  // Behind the adapter's back, as a broken disk or a bad migration would leave it.
  const db = new Database(join(dir, 'emr-bridge.db'));
  cleanups.push(() => db.close());
  db.exec('ALTER TABLE processing RENAME TO processing_away');

  const body = appointmentEventBody({ appointment: { ...(appointmentEventBody().appointment as object), serviceId: 'apt_failing_1' } });
  const delivery = signedWebhook(Date.now(), { body });
  const acked = await fetch(`${adapter.webhookUrl}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  expect(acked.status).toBe(200);

  const notReady = await waitFor(async () => {
    const r = await readyz();
    return r.status === 503 ? r : undefined;
  });
  expect(notReady.body).toMatchObject({ status: 'not_ready', checks: { workers: 'failing', database: 'ok' } });
  expect(emr.records.appointment.has('apt_failing_1')).toBe(false);

  db.exec('ALTER TABLE processing_away RENAME TO processing');
  await waitFor(async () => ((await readyz()).status === 200 ? true : undefined));
  await waitFor(() => emr.records.appointment.has('apt_failing_1') || undefined);
});
