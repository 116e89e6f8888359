// The bundled simulator and FHIR server bind where HOST says, as the adapter does (the container image sets
// 0.0.0.0 so the demo is reachable from outside), and `emr-bridge simulator` takes --host. 127.0.0.2 is a
// local address other than 127.0.0.1: a server bound to one of them refuses connections on the other.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { waitFor } from '../support/wait.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

const answers = (url: string) =>
  fetch(url).then(
    (r) => r.status,
    () => 'refused' as const,
  );
const on = (url: string, host: string) => {
  const u = new URL(url);
  u.hostname = host;
  return u.origin;
};

describe('HOST and the bundled parts', () => {
  it('binds the zero-configuration simulator and FHIR server to HOST, and the adapter still reaches both', async () => {
    const running = await startZeroConfigAdapter({ HOST: '127.0.0.2' });
    try {
      const { adapter } = running;
      expect(new URL(adapter.serviceUrl).hostname).toBe('127.0.0.2');
      expect(new URL(adapter.emrAddress!).hostname).toBe('127.0.0.2');
      // Provisioned through the simulator's advertised address, and the EMR answers the adapter.
      expect(adapter.clinicId).toBeDefined();
      expect(await answers(`${adapter.emrAddress}/metadata`)).toBe(200);
      expect(await answers(`${on(adapter.emrAddress!, '127.0.0.1')}/metadata`)).toBe('refused');
      expect(await answers(`${on(adapter.serviceUrl, '127.0.0.1')}/`)).toBe('refused');
      expect(await waitFor(async () => ((await answers(`${adapter.url}/readyz`)) === 200 ? true : undefined))).toBe(true);
    } finally {
      await running.close();
    }
  });

  describe('emr-bridge simulator', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-sim-host-'));
    let child: Child | undefined;
    afterAll(async () => {
      await child?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('listens on --host, over the HOST setting', async () => {
      const env = { HOST: '127.0.0.1', SIMULATOR_DATABASE_PATH: join(dir, 'sim.db'), DATA_DIR: dir };
      child = await startChild(['bin/emr-bridge.js', 'simulator', '--port', '0', '--host', '127.0.0.2'], { env });
      expect(new URL(child.url).hostname).toBe('127.0.0.2');
      expect(await answers(`${child.url}/`)).not.toBe('refused');
      expect(await answers(`${on(child.url, '127.0.0.1')}/`)).toBe('refused');
      await child.stop();
      child = undefined;
    });

    it('listens on HOST without --host', async () => {
      const env = { HOST: '0.0.0.0', SIMULATOR_DATABASE_PATH: join(dir, 'sim2.db'), DATA_DIR: dir };
      child = await startChild(['bin/emr-bridge.js', 'simulator', '--port', '0'], { env });
      // A wildcard bind is advertised on loopback and answers on every local address.
      expect(new URL(child.url).hostname).toBe('127.0.0.1');
      expect(await answers(`${on(child.url, '127.0.0.2')}/`)).not.toBe('refused');
    });
  });
});
