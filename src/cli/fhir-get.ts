// `emr-bridge fhir-get <path>`: reads the EMR as the adapter does, signed in as FHIR_AUTH says (after
// `npm start`, the bundled FHIR server with the adapter's own key), and prints the JSON. For the demo and
// QA: the bundled FHIR server, like a hospital's, answers nobody who has not signed in.
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { loadFhirAuthSettings } from '../emr/fhir/auth/index.ts';
import { createFhirHttp } from '../emr/fhir/http.ts';
import { UsageError, parse } from './args.ts';
import { cliDefaults } from './defaults.ts';
import { print } from './output.ts';
import { simulatorClock } from './simulator-clock.ts';

export const FHIR_GET_USAGE = `usage: emr-bridge fhir-get <path>     e.g. fhir-get 'Appointment?_count=10'

Reads <FHIR base URL>/<path> signed in as the adapter would (FHIR_AUTH), and prints the answer.
  -h, --help     this text`;

export async function fhirGetCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) return print(FHIR_GET_USAGE), 0;
  if (positionals.length !== 1) throw new UsageError(FHIR_GET_USAGE);
  const config = loadConfig();
  const defaults = cliDefaults(config);
  if (!defaults.fhirBaseUrl) throw new UsageError('no FHIR base URL: set FHIR_BASE_URL, or start the zero-configuration adapter (npm start) first');
  // A zero-configuration adapter and its FHIR server run on the simulator's clock; assertions must too.
  const clock = defaults.serviceUrl ? await simulatorClock(defaults.serviceUrl) : systemClock;
  const http = createFhirHttp({
    baseUrl: defaults.fhirBaseUrl,
    timeoutMs: config.fhir.timeoutMs,
    auth: await loadFhirAuthSettings(config.fhir.auth),
    clock,
    maxContentBytes: config.fhir.maxContentBytes,
  });
  try {
    print(JSON.stringify((await http.call('GET', positionals[0]!.replace(/^\//, ''))).body, null, 2));
    return 0;
  } finally {
    await http.close();
  }
}
