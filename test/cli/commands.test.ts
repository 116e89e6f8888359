// The CLI against a running adapter: push a document, list and show documents, list (a page at a time)
// and dismiss dead letters; and how it fails: unknown commands, bad settings named, a missing admin token.
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { runCli } from '../support/cli.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { waitFor } from '../support/wait.ts';
import { signedWebhook } from '../support/webhooks.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-cli-'));
let adapter: RunningAdapter;
beforeAll(async () => {
  adapter = await startAdapter({ config: parseConfig({ PORT: '0', DATA_DIR: dir, ADMIN_TOKEN: 'cli-admin-token-00001' }), logger: silentLogger() });
});
afterAll(async () => {
  await adapter.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { DATA_DIR: dir, ...env });

const admin = () => ['--admin-url', adapter.url, '--admin-token', adapter.adminToken];

describe('emr-bridge CLI', () => {
  it('pushes a lab report from a file and shows it', async () => {
    const file = join(dir, 'report.pdf');
    writeFileSync(file, PDF);
    const pushed = await cli([
      'push',
      'lab-report',
      '--file',
      file,
      '--external-id',
      'cli-lab-1',
      '--patient-phone',
      '+15550600001',
      '--patient-name',
      'Synthetic Patient',
      '--label',
      'Ferritin',
      ...admin(),
    ]);
    expect(pushed.code, pushed.out).toBe(0);
    expect(JSON.parse(pushed.out).document).toMatchObject({ externalId: 'cli-lab-1', source: 'cli' });
    await waitFor(async () => JSON.parse((await cli(['documents', 'show', 'cli-lab-1', ...admin()])).out).document.status !== 'queued');
    const listed = await cli(['documents', 'list', ...admin()]);
    expect(JSON.parse(listed.out).documents.map((d: { externalId: string }) => d.externalId)).toContain('cli-lab-1');
    expect(listed.out).not.toContain('Ferritin');
  }, 30_000);

  it('lists dead letters', async () => {
    const res = await cli(['dead-letters', 'list', ...admin()]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toHaveProperty('events');
  }, 20_000);

  it('lists dead letters a page at a time by type, dismisses one with a reason, and lists it only as dismissed', async () => {
    for (const eventId of ['cli-dead-1', 'cli-dead-2']) {
      const hook = signedWebhook(Date.now(), { body: { eventId, eventType: 'invoice.created' }, keyId: adapter.keyId, secrets: adapter.signingSecrets });
      expect((await fetch(adapter.webhookUrl, { method: 'POST', headers: hook.headers, body: hook.body })).status).toBe(200);
    }
    const listed = async (...flags: string[]) => {
      const res = await cli(['dead-letters', 'list', '--type', 'invoice.created', ...flags, ...admin()]);
      expect(res.code, res.out).toBe(0);
      return JSON.parse(res.out) as { events: { eventId: string }[]; nextCursor: string | null };
    };
    const deadNow = async () =>
      (await (
        await fetch(`${adapter.url}/admin/dead-letters?type=invoice.created`, { headers: { authorization: `Bearer ${adapter.adminToken}` } })
      ).json()) as { events: unknown[] };
    await waitFor(async () => (await deadNow()).events.length === 2);
    const first = await listed('--limit', '1');
    expect(first.events.map((e) => e.eventId)).toEqual(['cli-dead-1']);
    const second = await listed('--limit', '1', '--cursor', first.nextCursor!);
    expect(second).toMatchObject({ events: [{ eventId: 'cli-dead-2' }], nextCursor: null });

    const dismissed = await cli(['dead-letters', 'dismiss', 'cli-dead-1', '--reason', "a test event, not the clinic's", ...admin()]);
    expect(dismissed.code, dismissed.out).toBe(0);
    expect(JSON.parse(dismissed.out).dismissed).toMatchObject({ eventId: 'cli-dead-1', state: 'dismissed', dismissal: { by: 'admin' } });
    expect((await listed()).events.map((e) => e.eventId)).toEqual(['cli-dead-2']);
    expect((await listed('--state', 'dismissed')).events.map((e) => e.eventId)).toEqual(['cli-dead-1']);
  }, 60_000);

  it('needs a reason to dismiss, and names a bad list parameter', async () => {
    const noReason = await cli(['dead-letters', 'dismiss', 'cli-dead-x', ...admin()]);
    expect(noReason.code).toBe(2);
    expect(noReason.out).toContain('--reason');
    // A refused mapping is replayed by its entity type and serviceId; one that is not there is named.
    const noMapping = await cli(['dead-letters', 'replay-mapping', 'patient', 'pat_none', ...admin()]);
    expect(noMapping.code).toBe(1);
    expect(noMapping.out).toContain('not_found: no such mapping');
    const badLimit = await cli(['documents', 'list', '--limit', '0', ...admin()]);
    expect(badLimit.code).toBe(1);
    expect(badLimit.out).toContain('invalid_request: limit');
  }, 30_000);

  it('refuses a rejected document with its reason and a non-zero exit', async () => {
    const file = join(dir, 'image.gif');
    writeFileSync(file, 'GIF89a-not-allowed');
    const res = await cli([
      'push',
      'lab-report',
      '--file',
      file,
      '--external-id',
      'cli-bad',
      '--patient-phone',
      '+15550600002',
      '--patient-name',
      'X',
      '--label',
      'Y',
      ...admin(),
    ]);
    expect(res.code).toBe(1);
    expect(res.out).toContain('unsupported_file_type');
  }, 20_000);

  it('names a bad setting and exits 2', async () => {
    const res = await cli(['serve'], { PORT: 'eighty' });
    expect(res.code).toBe(2);
    expect(res.out).toContain('PORT');
  }, 20_000);

  it('exits 1 naming the address when the port is taken, leaving nothing running', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const port = String((blocker.address() as { port: number }).port);
    const res = await cli(['serve', '--port', port], { DATA_DIR: join(dir, 'taken') });
    blocker.close();
    expect(res.code).toBe(1);
    expect(res.out).toContain('EADDRINUSE');
  }, 20_000);

  it('answers an unknown command with usage and exit 2', async () => {
    const res = await cli(['frobnicate']);
    expect(res.code).toBe(2);
    expect(res.out).toContain('usage: emr-bridge');
  }, 20_000);
});
