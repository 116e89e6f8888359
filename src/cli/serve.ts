// `emr-bridge serve [--port N]`: the adapter (receiver, processor, pusher, admin API) in one process;
// with nothing configured, the bundled simulator and FHIR server start beside it, wired together.
import { loadConfig, type Config } from '../config.ts';
import { bundledStatePath } from '../runtime/bundled-state.ts';
import { createLogger } from '../logger.ts';
import { startAdapter, type RunningAdapter } from '../runtime/adapter.ts';
import { parse, portOption } from './args.ts';
import { SPECS } from './specs.ts';
import { createGatedStdout, print } from './output.ts';
import { onShutdown } from './signals.ts';

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS.serve);
  const config = loadConfig({ PORT: portOption(values.port), HOST: values.host });
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream });
  const adapter = await startAdapter({ config, logger });
  // Signal handlers before the first line: a script that reads it may stop us at once.
  const stopped = onShutdown(
    () => adapter.close(),
    (m) => logger.info(m),
  );
  out.announce(`listening on ${adapter.url}`);
  printBanner(adapter, config);
  return stopped;
}

/** The admin token as the banner shows it: enough to tell which one it is, never the whole of it. */
export const maskToken = (token: string): string => `${token.slice(0, 4)}…${'*'.repeat(8)}`;

function printBanner(a: RunningAdapter, config: Config): void {
  const part = (bundled: boolean) => (bundled ? 'bundled' : 'real');
  print(`  adapter        ${a.url}  (webhooks ${a.webhookUrl})`);
  print(`  admin API      ${a.adminUrl}/admin  (metrics ${a.adminUrl}/metrics)`);
  print(`  service        ${a.serviceUrl}  (${part(config.bundled.service)}${config.bundled.service ? ' simulator' : ''})`);
  if (a.fhirBaseUrl)
    print(`  FHIR R4 EMR    ${a.fhirBaseUrl}  (${part(config.bundled.fhir)}${config.bundled.fhir ? ' FHIR server' : ''}, sign-in: ${config.fhir.auth.mode})`);
  print(`  data folder    ${config.dataDir}`);
  print(`  admin token    ${maskToken(a.adminToken)}  (${config.adminToken ? 'ADMIN_TOKEN' : `generated, in ${bundledStatePath(config.dataDir)}`})`);
  if (!a.clinicId) return;
  print('');
  print('  Try it: create an appointment in the simulator, then see it arrive in FHIR:');
  print(`    curl -s -X POST ${a.serviceUrl}/_sim/appointments -H 'content-type: application/json' -d '{"clinicId":"${a.clinicId}"}'`);
  print(`    sleep 1; npx emr-bridge fhir-get 'Appointment?_count=10'   (the FHIR server wants a SMART sign-in, as a hospital's does)`);
  print('  Replay the QA samples (in another terminal): npx emr-bridge replay samples --fresh-ids');
  print('');
}
