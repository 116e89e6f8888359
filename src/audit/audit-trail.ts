// The audit trail (the Auditor of ./auditor.ts) over its store: entries stamped with the injected clock and
// cleaned before they are written (identifier characters only, bounded lengths), pages newest first. A write
// that fails is logged as an alert and never fails the action it records: the action has already happened.
import type { Clock } from '../clock.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { AuditEntry, AuditStore } from '../storage/audit.ts';
import type { Auditor } from './auditor.ts';

export const MAX_AUDIT_PAGE = 500;
const MAX_TARGETS = 100;
const MAX_TARGET_LENGTH = 200;

/** Identifier characters only: anything else (a space in a name, a quote) becomes `_`. */
const idText = (s: string, max: number) =>
  s
    .trim()
    .slice(0, max)
    .replace(/[^A-Za-z0-9._:@/+=-]/g, '_');

/** What is written: identifier text only, however the entry was built. */
export function cleanEntry(e: AuditEntry): AuditEntry {
  const targets = [...new Set(e.targets.filter((t) => typeof t === 'string' && t.trim() !== '').map((t) => idText(t, MAX_TARGET_LENGTH)))];
  return {
    actor: e.actor === '-' ? '-' : idText(e.actor, 64) || '-',
    door: e.door,
    action: idText(e.action, 64),
    targets: targets.slice(0, MAX_TARGETS),
    from: (e.from.replace(/^::ffff:/, '').match(/^[0-9A-Fa-f:.]{1,64}$/)?.[0] ?? '-') || '-',
    outcome: e.outcome,
  };
}

export function createAuditor(deps: { store: AuditStore; clock: Clock; logger: Logger }): Auditor {
  const logger = deps.logger.child({ component: 'audit' });
  return {
    async record(entry) {
      const e = cleanEntry(entry);
      try {
        const id = await deps.store.record({ ...e, at: deps.clock.now() });
        logger.info({ auditId: id, actor: e.actor, door: e.door, action: e.action, targets: e.targets, outcome: e.outcome }, 'admin action recorded');
      } catch (err) {
        logger.error({ alert: true, err: describeError(err), actor: e.actor, action: e.action, outcome: e.outcome }, 'audit entry could not be written');
      }
    },
    async page(q) {
      const limit = Math.max(1, Math.min(MAX_AUDIT_PAGE, Math.trunc(q.limit)));
      // One more than asked: whether there is a next page is known without an empty last one.
      const rows = await deps.store.page({ ...q, limit: limit + 1 });
      const entries = rows.slice(0, limit);
      return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
    },
  };
}

/** An auditor that records nothing: for an app built without a store (tests of other parts). */
export const noAuditor: Auditor = {
  record: async () => undefined,
  page: async () => ({ entries: [], next: null }),
};
