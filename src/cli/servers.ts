// `emr-bridge simulator` and `emr-bridge fhir-server`: the bundled servers on their own, for QA and demos.
import { loadConfig } from '../config.ts';
import { startFhirServer } from '../fhir-server/server.ts';
import { createLogger } from '../logger.ts';
import { startSimulatorServer } from '../simulator/server.ts';
import { parse, portOption } from './args.ts';
import { createGatedStdout } from './output.ts';
import { onShutdown } from './signals.ts';

export async function simulatorCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { port: { type: 'string' }, db: { type: 'string' } });
  const config = loadConfig();
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream, name: 'simulator' });
  const dbPath = values.db ?? config.simulator.databasePath;
  const server = await startSimulatorServer({
    port: Number(portOption(values.port) ?? 4000),
    host: '127.0.0.1',
    ...(dbPath ? { dbPath } : {}),
    logger,
  });
  out.announce(`listening on ${server.url}`);
  return onShutdown(() => server.close(), (m) => logger.info(m));
}

export async function fhirServerCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { port: { type: 'string' }, 'data-file': { type: 'string' } });
  const config = loadConfig();
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream, name: 'fhir-server' });
  const dataFile = values['data-file'];
  const server = await startFhirServer({
    port: Number(portOption(values.port) ?? 8103),
    host: '127.0.0.1',
    ...(dataFile ? { dataFile } : {}),
    logger,
  });
  out.announce(`listening on ${server.baseUrl}`);
  return onShutdown(() => server.close(), (m) => logger.info(m));
}
