// `emr-bridge <command>`: dispatches to one file per command. Only the CLI listens, schedules and
// handles signals; everything it runs is built by factories that tests use directly.
import { ClientKeyError } from '../emr/fhir/auth/keys.ts';
import { ConfigError } from '../errors.ts';
import { UsageError } from './args.ts';
import { fhirServerCommand, simulatorCommand } from './servers.ts';
import { serveCommand } from './serve.ts';

const USAGE = `usage: emr-bridge <command> [options]

  serve [--port N]                 the adapter; with nothing configured, also the bundled simulator and FHIR server
  simulator [--port N] [--db F]    the bundled service simulator alone
  fhir-server [--port N] [--host H] [--data-file F] [--auth none|smart] [--client ID=JWKS_FILE]... [--token-lifetime S]
                                   the bundled FHIR R4 server alone
  replay <file|folder> [--to URL] [--secret S] [--key-id K] [--fresh-ids] [--concurrency N] [--admin-url U --admin-token T]
  push lab-report|prescription --file F --external-id ID (--patient-external-id P | --patient-phone P --patient-name N) --label L
  documents list [--status S] | documents show <externalId> | documents retry <externalId>
  dead-letters list | dead-letters replay <eventId> | dead-letters replay --all [--event-type T]
  schemas [--out DIR] [--check]    JSON Schemas generated from the zod schemas (samples/schemas)
  keys generate [--alg ES384|RS384] [--out FILE]   a key pair for signing in to the EMR; prints the public JWKS
  fhir-get <path>                  reads the EMR signed in as the adapter (e.g. 'Appointment?_count=10')

Settings come from the environment or .env (see .env.example).`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => serveCommand,
  simulator: async () => simulatorCommand,
  'fhir-server': async () => fhirServerCommand,
  replay: async () => (await import('./replay.ts')).replayCommand,
  push: async () => (await import('./push.ts')).pushCommand,
  documents: async () => (await import('./admin-commands.ts')).documentsCommand,
  'dead-letters': async () => (await import('./admin-commands.ts')).deadLettersCommand,
  schemas: async () => (await import('./schemas.ts')).schemasCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  'fhir-get': async () => (await import('./fhir-get.ts')).fhirGetCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`unknown command: ${name}\n\n${USAGE}\n`);
    return 2;
  }
  try {
    return await (await load())(rest);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError || err instanceof ClientKeyError) {
      process.stderr.write(`emr-bridge ${name}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`emr-bridge ${name}: ${(err as Error).message}\n`);
    return 1;
  }
}
