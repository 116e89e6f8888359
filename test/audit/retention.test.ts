// The audit trail's retention: six years by default, never sooner than RETENTION_AUDIT_DAYS (nor than the
// events' ids), pruned by the processor's hourly retention pass on its own cutoff.
import { describe, expect, it, vi } from 'vitest';
import { createAuditor } from '../../src/audit/audit-trail.ts';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createProcessor } from '../../src/processor/index.ts';
import { createRetention } from '../../src/processor/retention.ts';
import { createSqliteAuditStore } from '../../src/storage/sqlite/audit.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';

const DAY = 24 * 60 * 60 * 1000;

function setup(settings: Record<string, string> = {}) {
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  const clock = createManualClock();
  const store = createSqliteAuditStore(db);
  const auditor = createAuditor({ store, clock, logger: silentLogger() });
  const config = parseConfig(settings);
  const retention = createRetention({
    store: createSqliteProcessorStores(db, clock).retention,
    pruneDocuments: async () => 0,
    pruneAudit: (cutoff) => store.prune(cutoff),
    clock,
    settings: config.retention,
  });
  const actionsLeft = async () => (await auditor.page({ limit: 500 })).entries.map((e) => e.targets[0]);
  const recordAt = async (ms: number, target: string) => {
    const now = clock.now();
    clock.set(ms);
    await auditor.record({ actor: 'integration', door: 'api', action: 'document.retry', targets: [target], from: '10.0.0.1', outcome: 'ok' });
    clock.set(now);
  };
  return { db, clock, config, retention, actionsLeft, recordAt };
}

describe('audit retention', () => {
  it('is six years by default', () => {
    expect(parseConfig({}).retention.auditDays).toBe(2190);
  });

  it('keeps an entry six years, and prunes it after', async () => {
    const s = setup();
    const now = s.clock.now();
    await s.recordAt(now - 2191 * DAY, 'older-than-six-years');
    await s.recordAt(now - 2189 * DAY, 'almost-six-years');
    await s.recordAt(now - 400 * DAY, 'last-year');
    expect((await s.retention.prune()).audit).toBe(1);
    expect(await s.actionsLeft()).toEqual(['last-year', 'almost-six-years']);
  });

  it('follows RETENTION_AUDIT_DAYS, and is never shorter than RETENTION_EVENT_ID_DAYS', async () => {
    const s = setup({ RETENTION_AUDIT_DAYS: '90' });
    await s.recordAt(s.clock.now() - 91 * DAY, 'old');
    await s.recordAt(s.clock.now() - 89 * DAY, 'recent');
    expect((await s.retention.prune()).audit).toBe(1);
    expect(await s.actionsLeft()).toEqual(['recent']);
    expect(() => parseConfig({ RETENTION_AUDIT_DAYS: '20', RETENTION_EVENT_ID_DAYS: '30' })).toThrow(
      /RETENTION_AUDIT_DAYS: must not be below RETENTION_EVENT_ID_DAYS/,
    );
  });

  it("runs with the processor's hourly retention pass, on its own cutoff", async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const pruneAudit = vi.fn(async () => 0);
    const pruneDocuments = vi.fn(async () => 0);
    const processor = createProcessor({
      stores: createSqliteProcessorStores(db, clock),
      pruneFinishedDocuments: pruneDocuments,
      pruneAudit,
      clock,
      logger: silentLogger(),
      emr: createMemoryEmr(),
      serviceClient: { putMapping: async () => undefined },
      documentEvents: { apply: async () => undefined },
      config: parseConfig({}),
    });
    await processor.runOnce();
    expect(pruneAudit).toHaveBeenCalledWith(clock.now() - 2190 * DAY);
    expect(pruneDocuments).toHaveBeenCalledWith(clock.now() - 30 * DAY);
    clock.advance(30 * 60_000);
    await processor.runOnce();
    expect(pruneAudit).toHaveBeenCalledTimes(1);
    clock.advance(30 * 60_000);
    await processor.runOnce();
    expect(pruneAudit).toHaveBeenCalledTimes(2);
  });
});
