// Retention of the quarantine, run by the processor's hourly pass: a row applied or dismissed (its body dropped
// then) goes after RETENTION_EVENT_ID_DAYS, with the eventIds; one still quarantined stays however old it is.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createRetention } from '../../src/processor/retention.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import { createSqliteQuarantineStore } from '../../src/storage/sqlite/quarantine.ts';

const DAY = 24 * 60 * 60 * 1000;
const MiB = 1024 * 1024;

const webhook = (eventId: string, receivedAt: number) => ({
  eventId,
  eventType: 'appointment.created',
  headers: { 'x-service-event-id': eventId, 'x-service-event-type': 'appointment.created' },
  body: Buffer.from(JSON.stringify({ eventId, eventType: 'appointment.created' })),
  receivedAt,
});

describe('quarantine retention', () => {
  it('prunes rows applied or dismissed past RETENTION_EVENT_ID_DAYS and keeps the quarantined ones', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const quarantine = createSqliteQuarantineStore(db, clock);
    const retention = createRetention({
      store: createSqliteProcessorStores(db, clock).retention,
      pruneDocuments: async () => 0,
      pruneQuarantine: (cutoff) => quarantine.prune(cutoff),
      clock,
      settings: parseConfig({ RETENTION_EVENT_ID_DAYS: '30' }).retention,
    });
    for (const id of ['waiting', 'applied', 'dismissed', 'dismissed-recently']) await quarantine.admit(webhook(id, clock.now()), MiB);
    await quarantine.apply('applied', { maxBodyBytes: MiB, by: 'ops' });
    await quarantine.dismiss('dismissed', 'a test event', 'ops');

    clock.advance(29 * DAY);
    await quarantine.dismiss('dismissed-recently', 'a test event', 'ops');
    expect((await retention.prune()).quarantine).toBe(0);

    clock.advance(2 * DAY);
    expect((await retention.prune()).quarantine).toBe(2);
    expect(await quarantine.get('applied')).toBeUndefined();
    expect(await quarantine.get('dismissed')).toBeUndefined();
    expect(await quarantine.get('dismissed-recently')).toMatchObject({ state: 'dismissed' });
    expect(await quarantine.get('waiting')).toMatchObject({ state: 'quarantined', bodyStored: true });
    db.close();
  });
});
