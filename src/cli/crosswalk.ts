// `emr-bridge crosswalk import FILE | export`: the crosswalk as CSV (`entityType,serviceId,emrId`) through a running
// adapter's admin API (POST /admin/crosswalk/import, GET /admin/crosswalk/export), so each imported line is checked
// against the EMR, made under the entity's lock and audited there (door `cli`) as a PUT would be.
import { readFileSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import { UsageError, parse } from './args.ts';
import { type AdminClient, adminClientFrom, report } from './admin-client.ts';
import { print } from './output.ts';
import { SPECS } from './specs.ts';

const USAGE = 'usage: crosswalk import <file> | crosswalk export';

export async function crosswalkCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.crosswalk);
  const [verb, file, ...rest] = positionals;
  if (rest.length || !((verb === 'import' && file) || (verb === 'export' && !file))) throw new UsageError(USAGE);
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  return verb === 'import' ? importFile(admin, file!) : exportAll(admin);
}

/** Prints what was imported and each line refused; exit 1 when any line was refused, or the file was. */
async function importFile(admin: AdminClient, file: string): Promise<number> {
  const res = await admin.text('POST', '/crosswalk/import', { contentType: 'text/csv', text: readFileSync(file, 'utf8') });
  const answer = { status: res.status, body: res.type.includes('json') ? (JSON.parse(res.text) as unknown) : undefined };
  const code = report(answer, print);
  const refused = (answer.body as { refused?: unknown[] } | undefined)?.refused ?? [];
  return code === 0 && refused.length > 0 ? 1 : code;
}

/** The CSV on standard output, as the import reads it. */
async function exportAll(admin: AdminClient): Promise<number> {
  const res = await admin.text('GET', '/crosswalk/export');
  if (res.status === 200) {
    process.stdout.write(res.text);
    return 0;
  }
  return report({ status: res.status, body: res.type.includes('json') ? (JSON.parse(res.text) as unknown) : undefined }, print);
}
