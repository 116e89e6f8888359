// Planned EMR downtime as the composition root wires it, on an injected clock: an adapter started inside an
// EMR_DOWNTIME window (New York, the Sunday its clocks go forward) asks nothing of the EMR (no start-up check,
// no readiness ping, no event applied) while the receiver keeps taking webhooks, /readyz stays 200 and says
// so, /admin/status and /metrics too; an operator's downtime survives a restart; ending the downtime lets the
// work resume by itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { waitFor } from '../support/wait.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const TOKEN = 'downtime-admin-token-0001';
// 01:30 EST on 2026-03-08, inside `0 1 * * SUN@America/New_York/PT2H` (06:00Z to 08:00Z).
const IN_WINDOW = Date.parse('2026-03-08T06:30:00.000Z');

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function settings(dir: string) {
  return quietAdapterConfig(dir, TOKEN, { EMR_DOWNTIME: '0 1 * * SUN@America/New_York/PT2H' });
}

async function start(dir: string, clock: ReturnType<typeof createManualClock>, emr: MemoryEmr): Promise<RunningAdapter> {
  const adapter = await startAdapter({ config: settings(dir), logger: silentLogger(), clock, emr });
  cleanups.push(() => adapter.close());
  return adapter;
}

const admin = (adapter: RunningAdapter, method: string, path: string, body?: unknown) =>
  fetch(`${adapter.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('an adapter during a planned EMR downtime', () => {
  it('asks nothing of the EMR, takes webhooks, stays ready and says so; work resumes once the downtime is ended', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-downtime-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = createManualClock(IN_WINDOW);
    const emr = createMemoryEmr();
    const adapter = await start(dir, clock, emr);

    const event = appointmentEventBody();
    const signed = signedWebhook(clock.now(), { body: event, keyId: adapter.keyId, secrets: adapter.signingSecrets });
    expect((await fetch(adapter.webhookUrl, { method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(200);

    const ready = await fetch(`${adapter.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { emr: 'downtime' }, downtime: { emr: { until: '2026-03-08T08:00:00.000Z' } } });
    const status = (await (await admin(adapter, 'GET', '/admin/status')).json()) as { components: { name: string }[] };
    expect(status.components.find((c) => c.name === 'emr')).toMatchObject({
      ok: true,
      downtime: { until: '2026-03-08T08:00:00.000Z', reason: 'planned window 0 1 * * SUN@America/New_York/PT2H (EMR_DOWNTIME)' },
    });
    expect(await (await fetch(`${adapter.url}/metrics`)).text()).toMatch(/^emr_bridge_emr_downtime 1$/m);
    // Several of the processor's passes (every PROCESSOR_POLL_MS): still nothing asked of the EMR.
    await new Promise((r) => setTimeout(r, 600));
    expect(emr.calls).toBe(0);

    // The EMR is back early: an operator ends the window; the work follows on its own.
    expect(await (await admin(adapter, 'DELETE', '/admin/emr/downtime')).json()).toEqual({ ended: true, downtime: null });
    await waitFor(() => emr.appointments().length === 1 || undefined);
    expect(await (await fetch(`${adapter.url}/metrics`)).text()).toMatch(/^emr_bridge_emr_downtime 0$/m);
    const audit = (await (await admin(adapter, 'GET', '/admin/audit?action=emr_downtime.end')).json()) as { entries: unknown[] };
    expect(audit.entries).toMatchObject([{ actor: 'admin', door: 'api', action: 'emr_downtime.end', outcome: 'ok' }]);
  }, 30_000);

  it("keeps an operator's downtime across a restart: the EMR is not checked at start-up, nor asked until it ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-downtime-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = createManualClock(Date.parse('2026-03-10T12:00:00.000Z'));
    const first = await start(dir, clock, createMemoryEmr());
    const started = await admin(first, 'POST', '/admin/emr/downtime', { until: '2026-03-10T16:00:00.000Z', reason: 'EMR upgrade' });
    expect(await started.json()).toEqual({ downtime: { until: '2026-03-10T16:00:00.000Z', reason: 'EMR upgrade', source: 'operator' } });
    await first.close();

    const emr = createMemoryEmr();
    const again = await start(dir, clock, emr);
    expect(await (await admin(again, 'GET', '/admin/emr/downtime')).json()).toMatchObject({
      downtime: { until: '2026-03-10T16:00:00.000Z', reason: 'EMR upgrade', source: 'operator' },
    });
    expect((await (await fetch(`${again.url}/readyz`)).json()) as unknown).toMatchObject({ checks: { emr: 'downtime' } });
    await new Promise((r) => setTimeout(r, 300));
    expect(emr.calls).toBe(0);
    // Once it is over, the EMR is asked again.
    clock.set(Date.parse('2026-03-10T16:00:00.000Z'));
    await waitFor(() => emr.calls > 0 || undefined);
  }, 30_000);
});
