// `emr-bridge audit [--actor A] [--action X] [--target ID] [--since T] [--until T] [--before N] [--limit N]`:
// the audit trail of a running adapter through GET /admin/audit, newest first. The answer's `nextBefore` is
// what --before takes to show older entries (null on the last page).
import { loadConfig } from '../config.ts';
import { UsageError, parse } from './args.ts';
import { adminClientFrom, report } from './admin-client.ts';
import { print } from './output.ts';
import { SPECS } from './specs.ts';

const FILTERS = ['actor', 'action', 'target', 'since', 'until', 'before', 'limit'] as const;

export async function auditCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.audit);
  if (positionals.length) throw new UsageError('audit takes no arguments, only options');
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const q = new URLSearchParams();
  for (const name of FILTERS) {
    const v = values[name];
    if (typeof v === 'string') q.set(name, v);
  }
  const query = q.toString();
  return report(await admin.call('GET', `/audit${query ? `?${query}` : ''}`), print);
}
