// Where a CLI command finds the adapter and its credentials when no flag names them: the settings first
// (environment, .env), then what a zero-configuration adapter wrote to <DATA_DIR>/bundled.json. So after
// `npm start`, `npx emr-bridge replay samples` or `npx emr-bridge documents list` need no flags at all.
import type { Config } from '../config.ts';
import { readBundledState } from '../runtime/bundled-state.ts';

export interface CliDefaults {
  /** The adapter's base URL (admin API under /admin). */
  adminUrl: string;
  adminToken?: string;
  /** The adapter's webhook receiver. */
  webhookUrl: string;
  keyId?: string;
  secrets: string[];
  /** The bundled simulator, when the adapter runs on it (and so on its clock). */
  serviceUrl?: string;
  /** The EMR's FHIR base URL: FHIR_BASE_URL, or the bundled FHIR server a zero-configuration adapter started. */
  fhirBaseUrl?: string;
}

export function cliDefaults(config: Config): CliDefaults {
  // bundled.json speaks for each bundled part only where these settings would run it too.
  const state = config.bundled.service || config.bundled.emr ? readBundledState(config.dataDir) : {};
  const bundled = config.bundled.service ? state : {};
  const fhir = config.emr.protocol === 'fhir' ? config.emr.settings : undefined;
  const fhirBaseUrl = fhir && (fhir.baseUrl ?? (config.bundled.emr ? state.emrAddress : undefined));
  const c = bundled.credentials;
  const local = `http://127.0.0.1:${config.port}`;
  const adminToken = config.adminToken ?? bundled.adminToken;
  const keyId = config.service.keyId ?? c?.keyId;
  return {
    adminUrl: config.admin
      ? `http://${config.admin.host === '0.0.0.0' ? '127.0.0.1' : config.admin.host}:${config.admin.port}`
      : c
        ? new URL(c.webhookUrl).origin
        : local,
    ...(adminToken ? { adminToken } : {}),
    webhookUrl: c?.webhookUrl ?? `${local}/webhooks/service`,
    ...(keyId ? { keyId } : {}),
    secrets: config.service.signingSecrets.length ? config.service.signingSecrets : c ? [...c.signingSecrets] : [],
    ...(c && bundled.serviceUrl ? { serviceUrl: bundled.serviceUrl } : {}),
    ...(fhirBaseUrl ? { fhirBaseUrl } : {}),
  };
}
