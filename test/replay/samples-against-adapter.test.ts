// Every sample replayed against a running adapter (zero-configuration mode: bundled simulator and FHIR
// server), outcomes compared with expectations by `runReplay`, the code behind `emr-bridge replay`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { SAMPLES_DIR } from '../../src/paths.ts';
import { runReplay } from '../../src/replay/replay.ts';
import type { RunningAdapter } from '../../src/runtime/adapter.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
let adapter: RunningAdapter;
let dir: string;
beforeAll(async () => {
  running = await startZeroConfigAdapter({ ADMIN_TOKEN: 'replay-admin-token-0001' });
  ({ adapter, dir } = running);
});
afterAll(async () => running?.close());

const replay = (paths: string[], lines: string[] = []) =>
  runReplay({
    paths,
    to: adapter.webhookUrl,
    secrets: adapter.signingSecrets,
    keyId: adapter.keyId,
    freshIds: true,
    concurrency: 4,
    adminToken: adapter.adminToken,
    out: (l) => lines.push(l),
    clock: systemClock,
  });

describe('replay of samples/', () => {
  it('matches every expectation, twice over with fresh ids', async () => {
    const lines: string[] = [];
    const paths = ['events', 'cases', 'documents'].map((d) => join(SAMPLES_DIR, d));
    const first = await replay(paths, lines);
    expect(first.mismatches, lines.join('\n')).toBe(0);
    expect(first.rows.length).toBeGreaterThanOrEqual(20);
    expect(lines.some((l) => l.startsWith('progress:'))).toBe(true);
    const second = await replay(paths);
    expect(second.mismatches).toBe(0);
  }, 60_000);

  it('reports a mismatch when an outcome differs from the expectation', async () => {
    const wrong = join(dir, 'wrong.json');
    writeFileSync(
      wrong,
      JSON.stringify({
        description: 'expects 200 from a bad signature',
        signature: 'invalid',
        expect: { http: 200 },
        body: { eventId: '00000000-0000-4000-8000-000000000001', eventType: 'patient.created' },
      }),
    );
    const result = await replay([wrong]);
    expect(result.mismatches).toBe(1);
    expect(result.rows[0]).toMatchObject({ expected: 'http 200', actual: 'http 401', ok: false });
  });
});
