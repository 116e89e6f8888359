// The auditor over its store: entries stamped with the injected clock and cleaned to identifier text before
// they are written; a store that fails is logged as an alert and never fails the action; pages say whether
// there is a next one without an empty last page.
import { describe, expect, it } from 'vitest';
import { cleanEntry, createAuditor } from '../../src/audit/audit-trail.ts';
import { createManualClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { AuditEntry, AuditStore } from '../../src/storage/audit.ts';
import { createSqliteAuditStore } from '../../src/storage/sqlite/audit.ts';
import { captureLogger } from '../support/log-capture.ts';

const entry = (o: Partial<AuditEntry> = {}): AuditEntry => ({
  actor: 'integration',
  door: 'api',
  action: 'document.retry',
  targets: ['lab-1'],
  from: '::ffff:10.0.0.7',
  outcome: 'ok',
  ...o,
});

describe('the auditor', () => {
  it('stamps entries with the injected clock', async () => {
    const clock = createManualClock(Date.parse('2030-05-01T00:00:00Z'));
    const auditor = createAuditor({
      store: createSqliteAuditStore(openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS })),
      clock,
      logger: captureLogger().logger,
    });
    await auditor.record(entry());
    expect((await auditor.page({ limit: 10 })).entries).toEqual([
      {
        id: 1,
        at: Date.parse('2030-05-01T00:00:00Z'),
        actor: 'integration',
        door: 'api',
        action: 'document.retry',
        targets: ['lab-1'],
        from: '10.0.0.7',
        outcome: 'ok',
      },
    ]);
  });

  it('writes identifier text only, bounded, whatever it is given', () => {
    const cleaned = cleanEntry(
      entry({
        actor: 'Jane Doe',
        targets: ['a b', 'ok-1', 'ok-1', '', 'x'.repeat(300), ...Array.from({ length: 200 }, (_, i) => `t${i}`)],
        from: 'not an address',
      }),
    );
    expect(cleaned.actor).toBe('Jane_Doe');
    expect(cleaned.targets.slice(0, 3)).toEqual(['a_b', 'ok-1', 'x'.repeat(200)]);
    expect(cleaned.targets).toHaveLength(100);
    expect(cleaned.from).toBe('-');
    expect(cleanEntry(entry({ actor: '-' })).actor).toBe('-');
  });

  it('logs a failed write as an alert and resolves: the action already happened', async () => {
    const { logger, lines } = captureLogger();
    const failing: AuditStore = {
      record: async () => {
        throw new Error('disk full');
      },
      page: async () => [],
      prune: async () => 0,
    };
    await expect(createAuditor({ store: failing, clock: createManualClock(), logger }).record(entry())).resolves.toBeUndefined();
    expect(lines()).toContainEqual(expect.objectContaining({ alert: true, action: 'document.retry', msg: 'audit entry could not be written' }));
  });

  it('gives the next page only when there is one', async () => {
    const auditor = createAuditor({
      store: createSqliteAuditStore(openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS })),
      clock: createManualClock(),
      logger: captureLogger().logger,
    });
    for (let i = 0; i < 4; i++) await auditor.record(entry({ targets: [`d${i}`] }));
    const first = await auditor.page({ limit: 2 });
    expect(first.entries.map((e) => e.targets[0])).toEqual(['d3', 'd2']);
    const second = await auditor.page({ limit: 2, before: first.next! });
    expect(second.entries.map((e) => e.targets[0])).toEqual(['d1', 'd0']);
    expect(second.next).toBeNull();
  });
});
