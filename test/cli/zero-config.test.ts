// The CLI beside a zero-configuration adapter (`npm start`): replay, documents and dead letters find the
// adapter, its signing secret and its admin token in the data folder, with no flags, even after QA has moved
// the bundled simulator's clock.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAdapter } from '../../src/runtime/adapter.ts';
import { readBundledState } from '../../src/runtime/bundled-state.ts';
import { ROOT } from '../../bench/support/child.ts';
import { runCli } from '../support/cli.ts';
import { json } from '../support/stack.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
let adapter: RunningAdapter;
let dir: string;
beforeAll(async () => {
  running = await startZeroConfigAdapter();
  ({ adapter, dir } = running);
});
afterAll(async () => running?.close());

// Only the data folder, as a second terminal next to `npm start` would have.
const cli = (args: string[]) => runCli(args, { DATA_DIR: dir, SERVICE_BASE_URL: '', ADMIN_TOKEN: '', SERVICE_KEY_ID: '', SERVICE_SIGNING_SECRETS: '' });

describe('the CLI next to `npm start`', () => {
  it('keeps the generated admin token and the credentials in the data folder, and only there', () => {
    const state = readBundledState(dir);
    expect(state.adminToken).toBe(adapter.adminToken);
    expect(state.credentials?.webhookUrl).toBe(adapter.webhookUrl);
  });

  it('replays samples with no flags, after the simulator clock was moved an hour', async () => {
    await json('POST', `${adapter.serviceUrl}/_sim/clock/advance`, { seconds: 3600 });
    const res = await cli(['replay', join(ROOT, 'samples', 'events'), '--fresh-ids']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(/\d+ matched, 0 mismatched/);
    expect(res.out).toContain('applied');
  }, 40_000);

  it('lists documents and dead letters with no flags, and retries nothing that is not there', async () => {
    expect((await cli(['documents', 'list'])).code).toBe(0);
    expect((await cli(['dead-letters', 'list'])).code).toBe(0);
    const retry = await cli(['documents', 'retry', 'no-such-document']);
    expect(retry.code).toBe(1);
    expect(retry.out).toContain('error 404: not_found');
  }, 30_000);

  it('names a --to that is not a URL as a usage error', async () => {
    const res = await cli(['replay', join(ROOT, 'samples', 'events'), '--to', 'not a url']);
    expect(res.code).toBe(2);
    expect(res.out).toContain('--to must be a URL');
  }, 20_000);
});
