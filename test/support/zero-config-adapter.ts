// An adapter in this process with zero configuration (what `npm start` runs): the bundled simulator and
// FHIR server beside it, data in a temporary folder that close() removes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';

export async function startZeroConfigAdapter(settings: Record<string, string> = {}): Promise<{ adapter: RunningAdapter; dir: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-zero-'));
  // The EMR scan runs once a year here: tests push documents through the admin API instead.
  const config = parseConfig({ PORT: '0', DATA_DIR: dir, PUSHER_SCAN_CRON: '0 0 1 1 *', ...settings });
  const adapter = await startAdapter({ config, logger: silentLogger() });
  return {
    adapter,
    dir,
    async close() {
      await adapter.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
