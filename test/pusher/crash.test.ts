// A pusher killed with SIGKILL in the middle of a send (the service has delivered, the answer has not
// arrived) and restarted: it sends the same externalId again, the service replays its first answer, and
// the patient has exactly one message.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { ROOT } from '../../bench/support/child.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-pusher-crash-'));
const sim = await startSimulatorServer({ logger: silentLogger() });
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]) {
  const proc = spawn(process.execPath, ['bin/run-ts.js', 'test/support/pusher-process.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

describe('pusher killed mid-send', () => {
  it('delivers no duplicate after a restart', async () => {
    const clinicId = (await json<{ clinicId: string }>('POST', `${sim.url}/_sim/clinics`, { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } }))
      .body.clinicId;
    const key = (await json<{ key: string }>('POST', `${sim.url}/_sim/keys`, { clinicId })).body.key;
    // The service does the work, then sits on its answer: the window in which the pusher dies.
    await json('POST', `${sim.url}/_sim/faults`, { integration: { delayMs: 5_000 } });
    const db = join(dir, 'adapter.db');
    const first = run([db, sim.url, key, 'send', 'crash-doc-1']);
    await waitFor(async () => (await json<unknown[]>('GET', `${sim.url}/_sim/messages?phone=%2B15550401234`)).body.length === 1, 20_000);
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(first.output()).not.toContain('SENT');

    await json('POST', `${sim.url}/_sim/faults`, {});
    const second = run([db, sim.url, key, 'resume', 'crash-doc-1']);
    expect(await second.exited).toBe(0);
    // At once, not after the dead process's 60-second lease: the restart takes its send over.
    expect(second.output()).toContain('recovered 1');
    expect(second.output()).toContain('SENT');
    expect((await json<unknown[]>('GET', `${sim.url}/_sim/messages?phone=%2B15550401234`)).body).toHaveLength(1);
  }, 60_000);
});
