// A webhook body's lifetime with sealing on, on an injected clock: stored sealed, applied, dropped
// RETENTION_BODY_DAYS later while its eventId stays, so a late duplicate is still acknowledged as one and never
// stored or applied again; then the eventId goes too, RETENTION_EVENT_ID_DAYS after.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createInbox } from '../../src/inbox/inbox.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createSealer } from '../../src/sealing/sealer.ts';
import { SEALED_PREFIX } from '../../src/sealing/format.ts';
import { openDatabase, type Db } from '../../src/sqlite/open.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import { keySetOf } from '../sealing/builders.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';

const DAY = 24 * 3600_000;
let db: Db | undefined;
afterEach(() => db?.close());

describe('a sealed body through its lifetime', () => {
  it('is dropped after RETENTION_BODY_DAYS while its eventId still dedupes, then the eventId goes', async () => {
    db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const sealer = createSealer(await keySetOf('k-a'));
    const inbox = createInbox({ store: createSqliteInboxStore(db), clock, logger: silentLogger(), sealer });
    const stores = createSqliteProcessorStores(db, clock, sealer);
    const event = appointmentEvent({ serviceId: 'apt_1' });
    const delivery = { eventId: String(event.eventId), eventType: 'appointment.created', headers: {}, body: Buffer.from(JSON.stringify(event)) };
    const raw = () => db!.prepare('SELECT body FROM inbox_events WHERE event_id = ?').pluck().get(delivery.eventId) as Buffer | null | undefined;

    expect(await inbox.store(delivery)).toEqual({ duplicate: false });
    expect(raw()!.toString('latin1').startsWith(SEALED_PREFIX)).toBe(true);
    const taken = await stores.queue.intake();
    const [claimed] = await stores.queue.claim(10, 60_000);
    await stores.queue.commit([{ kind: 'applied', inboxId: claimed!.inboxId, versions: [], claims: [] }]);
    expect(taken.events).toHaveLength(1);

    // RETENTION_BODY_DAYS (7) later: the body goes, the eventId stays, and the same delivery is a duplicate.
    clock.advance(7 * DAY + 1);
    expect(await stores.retention.pruneEvents({ bodiesBefore: clock.now() - 7 * DAY, eventsBefore: clock.now() - 30 * DAY })).toEqual({ bodies: 1, events: 0 });
    expect(raw()).toBeNull();
    expect(await inbox.store(delivery)).toEqual({ duplicate: true });
    expect((await stores.queue.intake()).taken).toBe(0);
    expect((await stores.events.get(delivery.eventId))?.bodyStored).toBe(false);

    // RETENTION_EVENT_ID_DAYS (30) after it was applied: the row goes too (the newest row always stays in SQLite,
    // so another event arrives first).
    await inbox.store({ ...delivery, eventId: 'later', body: Buffer.from(JSON.stringify(appointmentEvent({ serviceId: 'apt_2' }))) });
    clock.advance(23 * DAY);
    expect((await stores.retention.pruneEvents({ bodiesBefore: clock.now() - 7 * DAY, eventsBefore: clock.now() - 30 * DAY })).events).toBe(1);
    expect(raw()).toBeUndefined();
    await inbox.close();
  });
});
