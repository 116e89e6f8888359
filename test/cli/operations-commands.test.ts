// The operations team's CLI against a running adapter: `quarantine` lists a signed webhook kept over the size
// limit, refuses to apply it while the limit is too low, and dismisses it with a reason; `downtime` starts a
// planned EMR downtime, shows it and ends it. Each goes through the admin API, so each is audited there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { runCli } from '../support/cli.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const MAX_BODY_BYTES = 4096;
const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-cli-operations-'));
let adapter: RunningAdapter;
beforeAll(async () => {
  adapter = await startAdapter({
    config: quietAdapterConfig(dir, 'cli-operations-token-0001', { WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY_BYTES) }),
    logger: silentLogger(),
    emr: createMemoryEmr(),
  });
});
afterAll(async () => {
  await adapter.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli([...args, '--admin-url', adapter.url, '--admin-token', adapter.adminToken], { DATA_DIR: dir });

describe('emr-bridge quarantine', () => {
  it('lists a signed webhook kept over the limit, refuses to apply it while the limit is too low, and dismisses it', async () => {
    const event = appointmentEventBody() as Record<string, unknown> & { appointment: Record<string, unknown> };
    const body = { ...event, appointment: { ...event.appointment, notes: 'n'.repeat(2 * MAX_BODY_BYTES) } };
    const w = signedWebhook(Date.now(), { body, keyId: adapter.keyId, secrets: adapter.signingSecrets });
    const eventId = String(event.eventId);
    expect((await fetch(adapter.webhookUrl, { method: 'POST', headers: w.headers, body: w.body })).status).toBe(202);

    const listed = await cli(['quarantine', 'list']);
    expect(listed.code, listed.out).toBe(0);
    expect(JSON.parse(listed.out).events.map((e: { eventId: string }) => e.eventId)).toEqual([eventId]);

    const apply = await cli(['quarantine', 'apply', eventId]);
    expect(apply.code).toBe(1);
    expect(apply.out).toMatch(/^error 422: limit_too_low: .*WEBHOOK_MAX_BODY_BYTES/);

    const noReason = await cli(['quarantine', 'dismiss', eventId]);
    expect(noReason.code).toBe(2);
    expect(noReason.out).toContain('usage: quarantine list');

    const dismissed = await cli(['quarantine', 'dismiss', eventId, '--reason', 'a test event, too large to apply']);
    expect(dismissed.code, dismissed.out).toBe(0);
    const after = await cli(['quarantine', 'list', '--state', 'dismissed']);
    expect(JSON.parse(after.out).events).toMatchObject([{ eventId, state: 'dismissed' }]);
  });
});

describe('emr-bridge downtime', () => {
  it('starts a planned EMR downtime until a time, shows it, and ends it', async () => {
    const until = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const started = await cli(['downtime', 'start', '--until', until, '--reason', 'EMR upgrade']);
    expect(started.code, started.out).toBe(0);
    expect(JSON.parse(started.out).downtime).toMatchObject({ until, reason: 'EMR upgrade' });

    const shown = await cli(['downtime', 'show']);
    expect(JSON.parse(shown.out).downtime).toMatchObject({ until, reason: 'EMR upgrade' });

    const ended = await cli(['downtime', 'end']);
    expect(ended.code, ended.out).toBe(0);
    expect(JSON.parse(ended.out)).toMatchObject({ ended: true, downtime: null });
  });

  it('says how to use it when a start names no time, and the API names a time in the past', async () => {
    const bare = await cli(['downtime', 'start', '--reason', 'EMR upgrade']);
    expect(bare.code).toBe(2);
    expect(bare.out).toContain('usage: downtime show');
    const past = await cli(['downtime', 'start', '--until', '2020-01-01T00:00:00Z', '--reason', 'EMR upgrade']);
    expect(past.code).toBe(1);
    expect(past.out).toMatch(/^error 400: /);
  });
});
