// `emr-bridge migrate`: applies the configured database's pending migrations and exits. Run it before the
// first `serve` on PostgreSQL and after each upgrade (serve refuses an outdated schema and names this command).
// On SQLite it holds the one-process lock meanwhile, so it is refused while a serve runs on the file.
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { migrateConfiguredDatabase } from '../storage/migrate.ts';
import { UsageError, parse } from './args.ts';
import { print } from './output.ts';
import { SPECS } from './specs.ts';

export async function migrateCommand(argv: string[]): Promise<number> {
  const { positionals } = parse(argv, SPECS.migrate);
  if (positionals.length) throw new UsageError(`takes no arguments, got ${positionals.join(' ')}`);
  const report = await migrateConfiguredDatabase(loadConfig({}, 'tools'), systemClock);
  const engine = report.engine === 'postgres' ? 'PostgreSQL' : 'SQLite';
  if (!report.applied.length) {
    print(`${engine} ${report.where}: the schema is current, nothing to apply`);
    return 0;
  }
  print(`${engine} ${report.where}: applied ${report.applied.length} migration${report.applied.length === 1 ? '' : 's'}`);
  for (const name of report.applied) print(`  ${name}`);
  return 0;
}
