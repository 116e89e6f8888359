// `emr-bridge fhir-get <path>`: reads the EMR as the adapter does, signed in as FHIR_AUTH says (after
// `npm start`, the bundled FHIR server with the adapter's own key), and prints the JSON. For the demo and
// QA: the bundled FHIR server, like a hospital's, answers nobody who has not signed in. Beside the vendor demo it
// reads the Slots and Schedules too.
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { loadFhirAuthSettings } from '../emr/fhir/auth/index.ts';
import { createFhirHttp } from '../emr/fhir/http.ts';
import { UsageError, parse } from './args.ts';
import { SPECS } from './specs.ts';
import { cliDefaults } from './defaults.ts';
import { print } from './output.ts';
import { besideVendorDemo, withSlotScopes } from './replay-slots.ts';
import { simulatorClock } from './simulator-clock.ts';

export async function fhirGetCommand(argv: string[]): Promise<number> {
  const { positionals } = parse(argv, SPECS['fhir-get']);
  if (positionals.length !== 1) throw new UsageError('give one path, e.g. Appointment?_count=10');
  const config = loadConfig();
  if (config.emr.protocol !== 'fhir') throw new UsageError(`EMR_PROTOCOL is ${config.emr.protocol}: fhir-get reads a FHIR EMR`);
  const fhir = config.emr.settings;
  const defaults = cliDefaults(config);
  if (!defaults.fhirBaseUrl) throw new UsageError('no FHIR base URL: set FHIR_BASE_URL, or start the zero-configuration adapter (npm start) first');
  // A zero-configuration adapter and its FHIR server run on the simulator's clock; assertions must too.
  const clock = defaults.serviceUrl ? await simulatorClock(defaults.serviceUrl) : systemClock;
  const http = createFhirHttp({
    baseUrl: defaults.fhirBaseUrl,
    timeoutMs: fhir.timeoutMs,
    auth: await loadFhirAuthSettings(besideVendorDemo(config) ? withSlotScopes(fhir.auth) : fhir.auth),
    clock,
    maxContentBytes: fhir.maxContentBytes,
  });
  try {
    print(JSON.stringify((await http.call('GET', positionals[0]!.replace(/^\//, ''))).body, null, 2));
    return 0;
  } finally {
    await http.close();
  }
}
