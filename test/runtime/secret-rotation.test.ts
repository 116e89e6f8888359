// Zero-configuration mode follows a signing-secret rotation made on the bundled simulator (QA's curl of
// rotate-secret, then retire-secrets): the receiver accepts every secret the simulator signs with, and
// bundled.json (so the CLI) holds the current ones; a file from before, with a retired secret, heals at start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { bundledStatePath, readBundledState } from '../../src/runtime/bundled-state.ts';
import { ROOT } from '../../bench/support/child.ts';
import { runCli } from '../support/cli.ts';
import { json, threeFreePorts } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

/** Creates an appointment on the simulator and waits until the adapter has applied its event. */
async function appointmentApplied(adapter: RunningAdapter): Promise<void> {
  const sim = adapter.serviceUrl;
  const deliveries = async () => (await json<{ eventId: string; eventType: string; statusCode: number | null }[]>('GET', `${sim}/_sim/deliveries`)).body;
  const before = new Set((await deliveries()).map((d) => d.eventId));
  await json('POST', `${sim}/_sim/appointments`, { clinicId: adapter.clinicId });
  const delivered = await waitFor(async () => (await deliveries()).find((d) => d.eventType === 'appointment.created' && !before.has(d.eventId)));
  expect(delivered.statusCode).toBe(200);
  const auth = { authorization: `Bearer ${adapter.adminToken}` };
  const state = await waitFor(async () => {
    const res = await json<{ state: string }>('GET', `${adapter.adminUrl}/admin/events/${delivered.eventId}`, undefined, auth);
    return res.body?.state === 'applied' ? res.body.state : undefined;
  }, 15_000);
  expect(state).toBe('applied');
}

/** The CLI as a second terminal next to `npm start` runs it: only the data folder. */
const cli = (dir: string, args: string[]) =>
  runCli(args, { DATA_DIR: dir, SERVICE_BASE_URL: '', ADMIN_TOKEN: '', SERVICE_KEY_ID: '', SERVICE_SIGNING_SECRETS: '' });

describe('a secret rotation on the bundled simulator', () => {
  let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
  let adapter: RunningAdapter;
  let subscription: string;
  beforeAll(async () => {
    running = await startZeroConfigAdapter();
    adapter = running.adapter;
    subscription = `${adapter.serviceUrl}/_sim/subscriptions/${readBundledState(running.dir).credentials!.subscriptionId}`;
  });
  afterAll(async () => running?.close());

  it('keeps webhooks applied through rotate-secret and retire-secrets, and bundled.json holds the new secret only', async () => {
    const old = adapter.signingSecrets;
    expect(old).toHaveLength(1);

    const rotated = await json<{ signingSecret: string }>('POST', `${subscription}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.signingSecret;
    expect(adapter.signingSecrets).toEqual([fresh, ...old]);
    expect(readBundledState(running.dir).credentials!.signingSecrets).toEqual([fresh, ...old]);
    await appointmentApplied(adapter);

    expect((await json('POST', `${subscription}/retire-secrets`)).status).toBe(200);
    expect(adapter.signingSecrets).toEqual([fresh]);
    await appointmentApplied(adapter);

    const saved = JSON.parse(readFileSync(bundledStatePath(running.dir), 'utf8')) as { credentials: Record<string, unknown> };
    expect(saved.credentials.signingSecrets).toEqual([fresh]);
    expect(saved.credentials).not.toHaveProperty('signingSecret');
  }, 40_000);

  it('lets the CLI replay a sample with no flags after the rotation', async () => {
    const res = await cli(running.dir, ['replay', join(ROOT, 'samples', 'events', '01-appointment-created.json'), '--fresh-ids']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toContain('applied');
  }, 30_000);
});

describe('a bundled.json written before secrets were followed', () => {
  it('is read as a list, and one holding a retired secret is brought up to date at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-rotation-'));
    // The same port after the restart: the subscription (and its webhook URL) is reused, not made anew.
    const config = parseConfig({ PORT: String(await threeFreePorts()), DATA_DIR: dir, PUSHER_SCAN_CRON: '0 0 1 1 *' });
    try {
      let adapter = await startAdapter({ config, logger: silentLogger() });
      const { subscriptionId } = readBundledState(dir).credentials!;
      const sub = `${adapter.serviceUrl}/_sim/subscriptions/${subscriptionId}`;
      const fresh = (await json<{ signingSecret: string }>('POST', `${sub}/rotate-secret`)).body.signingSecret;
      await json('POST', `${sub}/retire-secrets`);
      await adapter.close();

      // As the broken demo left it: the old field, holding the secret the simulator no longer signs with.
      const state = JSON.parse(readFileSync(bundledStatePath(dir), 'utf8')) as { credentials: Record<string, unknown> };
      const { signingSecrets: _, ...rest } = state.credentials;
      writeFileSync(bundledStatePath(dir), JSON.stringify({ ...state, credentials: { ...rest, signingSecret: 'whsec_retired' } }));
      expect(readBundledState(dir).credentials!.signingSecrets).toEqual(['whsec_retired']);

      adapter = await startAdapter({ config, logger: silentLogger() });
      try {
        expect(adapter.signingSecrets).toEqual([fresh]);
        expect(readBundledState(dir).credentials!.signingSecrets).toEqual([fresh]);
        await appointmentApplied(adapter);
      } finally {
        await adapter.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
