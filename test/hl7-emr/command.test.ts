// `emr-bridge hl7-emr` as a script runs it: `listening on mllp://127.0.0.1:<port>` first, acknowledging over
// MLLP, notifying over the connections --notify-connections gives, and a clean stop (exit 0) on SIGTERM; a bad
// option value is answered with the usage, exit 2.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../bench/support/child.ts';
import { main } from '../../src/cli/main.ts';
import { captureOutput } from '../support/captured-output.ts';
import { laneOf } from '../../src/hl7-emr/lanes.ts';
import { ackCode, adt, clientOf, send, startTarget, waitFor } from './support.ts';

/**
 * Runs `emr-bridge hl7-emr <args>` as a script, `drive` reading what it printed so far; then stops it with SIGTERM
 * and expects a clean exit (killed outright if a check failed first).
 */
async function asScript(args: string[], drive: (out: () => string) => Promise<void>): Promise<void> {
  const proc = spawn(process.execPath, ['bin/emr-bridge.js', 'hl7-emr', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await drive(() => out);
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
}

describe('emr-bridge hl7-emr', () => {
  it('prints its MLLP address first, acknowledges, and stops on SIGTERM', async () => {
    await asScript(['--port', '0', '--control-port', '0'], async (out) => {
      const firstLine = await waitFor(() => (out().includes('\n') ? out().split('\n')[0] : undefined), 20_000);
      const m = /^listening on mllp:\/\/127\.0\.0\.1:(\d+)$/.exec(firstLine!);
      expect(m, out()).not.toBeNull();
      const client = clientOf({ port: Number(m![1]) });
      expect(ackCode(await send(client, adt('A28', { serviceId: 'pat-cli' })))).toBe('AA');
      await client.close();
      await waitFor(() => out().includes('HL7 EMR ready'));
    });
  }, 30_000);

  it('sends its notifications over --notify-connections connections', async () => {
    const target = await startTarget();
    await asScript(['--port', '0', '--notify', target.url, '--notify-connections', '3'], async (out) => {
      const port = await waitFor(() => /^listening on mllp:\/\/127\.0\.0\.1:(\d+)$/m.exec(out())?.[1], 20_000);
      const client = clientOf({ port: Number(port) });
      // Patients on three different lanes of three: three connections to the target.
      const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => `pat-cli-${x}`);
      const lanes = new Map(ids.map((id) => [laneOf(`patient:${id}`, 3), id]));
      expect(lanes.size).toBe(3);
      for (const id of lanes.values()) expect(ackCode(await send(client, adt('A28', { serviceId: id })))).toBe('AA');
      await waitFor(() => target.received.length === 3);
      expect(new Set(target.receivedOn).size).toBe(3);
      await waitFor(() => out().includes('"notifyConnections":3'));
    });
  }, 30_000);

  it.each([
    ['--notify', 'http://127.0.0.1:2575'],
    ['--notify', 'mllp://127.0.0.1'],
    ['--control-port', 'x'],
    ['--port', '70000'],
    ['--notify-connections', '0'],
    ['--notify-connections', 'abc'],
    ['--notify-connections', '17'],
  ])('refuses %s %s with the usage, exit 2', async (option, value) => {
    const res = await captureOutput(() => main(['hl7-emr', option, value]));
    expect(res.code).toBe(2);
    expect(res.err).toContain(option);
    expect(res.err).toContain('usage: emr-bridge hl7-emr');
  });
});
