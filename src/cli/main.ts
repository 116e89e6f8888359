// `emr-bridge <command>`: dispatches to one file per command (their options: ./specs.ts). Only the CLI
// listens, schedules and handles signals; everything it runs is built by factories that tests use directly.
import { ClientKeyError } from '../emr/fhir/auth/keys.ts';
import { ConfigError } from '../errors.ts';
import { DataKeysError } from '../sealing/errors.ts';
import { HelpRequested, UsageError } from './args.ts';
import { overview, SPECS, usageOf, type CommandName } from './specs.ts';
import { fhirServerCommand, simulatorCommand } from './servers.ts';
import { serveCommand } from './serve.ts';

type Command = (argv: string[]) => Promise<number>;

const commands: Record<CommandName, () => Promise<Command>> = {
  serve: async () => serveCommand,
  simulator: async () => simulatorCommand,
  'fhir-server': async () => fhirServerCommand,
  'hl7-emr': async () => (await import('./hl7-emr.ts')).hl7EmrCommand,
  replay: async () => (await import('./replay.ts')).replayCommand,
  push: async () => (await import('./push.ts')).pushCommand,
  documents: async () => (await import('./admin-commands.ts')).documentsCommand,
  'dead-letters': async () => (await import('./admin-commands.ts')).deadLettersCommand,
  quarantine: async () => (await import('./admin-commands.ts')).quarantineCommand,
  downtime: async () => (await import('./admin-commands.ts')).downtimeCommand,
  crosswalk: async () => (await import('./crosswalk.ts')).crosswalkCommand,
  credentials: async () => (await import('./credentials.ts')).credentialsCommand,
  audit: async () => (await import('./audit.ts')).auditCommand,
  schemas: async () => (await import('./schemas.ts')).schemasCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  'data-keys': async () => (await import('./data-keys.ts')).dataKeysCommand,
  'fhir-get': async () => (await import('./fhir-get.ts')).fhirGetCommand,
  migrate: async () => (await import('./migrate.ts')).migrateCommand,
  backup: async () => (await import('./backup.ts')).backupCommand,
};

const isCommand = (name: string): name is CommandName => Object.hasOwn(commands, name);

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${overview()}\n`);
    return name ? 0 : 2;
  }
  if (!isCommand(name)) {
    process.stderr.write(`unknown command: ${name}\n\n${overview()}\n`);
    return 2;
  }
  try {
    return await (await commands[name]())(rest);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(`${usageOf(err.spec)}\n`);
      return 0;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`emr-bridge ${name}: ${err.message}\n\n${usageOf(SPECS[name])}\n`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof ClientKeyError || err instanceof DataKeysError) {
      process.stderr.write(`emr-bridge ${name}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`emr-bridge ${name}: ${(err as Error).message}\n`);
    return 1;
  }
}
