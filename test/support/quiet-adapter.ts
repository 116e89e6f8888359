// Settings for an adapter on its own: its service and FHIR server an unused loopback port (127.0.0.1:9, every
// call refused at once), its EMR usually the in-memory one handed to startAdapter, and no document scan. For
// tests of its receiver, admin API, CLI, status and own EMR port; each adds what it is about.
import { type Config, parseConfig } from '../../src/config.ts';

export const REFUSING_URL = 'http://127.0.0.1:9';

export function quietAdapterConfig(dir: string, adminToken: string, extra: Record<string, string> = {}): Config {
  return parseConfig({
    PORT: '0',
    DATA_DIR: dir,
    SERVICE_BASE_URL: REFUSING_URL,
    SERVICE_API_KEY: 'live_test',
    SERVICE_KEY_ID: 'key_test',
    SERVICE_SIGNING_SECRETS: 'whsec_test',
    ADMIN_TOKEN: adminToken,
    FHIR_BASE_URL: `${REFUSING_URL}/fhir`,
    PUSHER_SCAN_CRON: '0 0 1 1 *',
    ...extra,
  });
}
