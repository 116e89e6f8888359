// Webhook bodies sealed at rest, on every engine (docs/data-at-rest.md): the inbox row holds the sealed value,
// never the patient's name or phone; intake, a claim's parse and the event views open it; a body that does
// not open becomes a dead letter naming why, and an intake none of whose bodies opens for want of a key stops
// as an incident with nothing taken in.
import { afterEach, describe, expect, it } from 'vitest';
import { createSealer, type Sealer } from '../../src/sealing/sealer.ts';
import { SEALED_PREFIX } from '../../src/sealing/format.ts';
import { DataKeysIncidentError } from '../../src/storage/inbox-bodies.ts';
import { INBOX_BODY, sealContext } from '../../src/storage/sealed-contexts.ts';
import { keySetOf } from '../sealing/builders.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { engines, type OpenedEngine } from './processor-engines.ts';

const MARKER_NAME = 'Zyxwvut Markername';
const MARKER_PHONE = '+15550001234';

const sealerOf = async (...kids: string[]): Promise<Sealer> => createSealer(await keySetOf(...kids));
/** An appointment whose patient carries the markers a raw read must never find. */
const markedEvent = (serviceId: string) => {
  const event = appointmentEvent({ serviceId }) as Record<string, unknown> & { patient: Record<string, unknown> };
  return { ...event, patient: { ...event.patient, name: MARKER_NAME, phone: MARKER_PHONE } };
};

describe.each(engines)('sealed webhook bodies on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });
  const rawBody = async (eventId: string) =>
    Buffer.from((await e.query<{ body: Uint8Array }>('SELECT body FROM inbox_events WHERE event_id = ?', eventId))[0]!.body);

  it('stores the body sealed, and intake and the event views read it whole', async () => {
    e = await engine.open({ sealer: await sealerOf('k-a') });
    const event = markedEvent('apt_1');
    const { eventId } = await e.store(event);
    const raw = await rawBody(eventId);
    expect(raw.toString('latin1').startsWith(SEALED_PREFIX)).toBe(true);
    expect(raw.includes(MARKER_NAME)).toBe(false);
    expect(raw.includes(MARKER_PHONE)).toBe(false);
    const intake = await e.stores.queue.intake();
    expect(intake.events[0]!.event).toMatchObject({ eventId, patient: { name: MARKER_NAME } });
    expect(JSON.parse((await e.stores.events.body(eventId))!.toString('utf8'))).toEqual(event);
  });

  it("parses a claimed event's sealed body again when intake's copy is not at hand", async () => {
    e = await engine.open({ sealer: await sealerOf('k-a') });
    const { inboxId, eventId } = await e.store(markedEvent('apt_1'));
    await e.stores.queue.intake();
    const parsed = await e.stores.queue.event(inboxId);
    expect(parsed.ok && parsed.event.eventId).toBe(eventId);
  });

  it('parks an event whose body was sealed for another row, naming why', async () => {
    e = await engine.open({ sealer: await sealerOf('k-a') });
    const a = await e.store(markedEvent('apt_1'));
    const b = await e.store(markedEvent('apt_2'));
    await e.query('UPDATE inbox_events SET body = ? WHERE event_id = ?', await rawBody(a.eventId), b.eventId);
    const intake = await e.stores.queue.intake();
    expect(intake.events.map((x) => x.inboxId)).toEqual([a.inboxId]);
    expect(intake.dead).toEqual([{ eventId: b.eventId, reason: expect.stringMatching(/^sealed_value_misplaced: /) }]);
  });

  it('parks an event whose body is truncated, naming why', async () => {
    e = await engine.open({ sealer: await sealerOf('k-a') });
    const a = await e.store(markedEvent('apt_1'));
    const b = await e.store(markedEvent('apt_2'));
    const raw = await rawBody(b.eventId);
    await e.query('UPDATE inbox_events SET body = ? WHERE event_id = ?', raw.subarray(0, raw.length - 10), b.eventId);
    const intake = await e.stores.queue.intake();
    expect(intake.events.map((x) => x.inboxId)).toEqual([a.inboxId]);
    expect(intake.dead).toEqual([{ eventId: b.eventId, reason: expect.stringMatching(/^sealed_value_invalid: /) }]);
  });

  it('parks an event sealed under a key the process lacks, naming the key id, when others open', async () => {
    e = await engine.open({ sealer: await sealerOf('k-a') });
    const lost = await sealerOf('k-lost');
    const a = await e.store(markedEvent('apt_1'));
    const b = await e.store(markedEvent('apt_2'));
    const resealed = await lost.sealBytes(Buffer.from(JSON.stringify(markedEvent('apt_2'))), sealContext(INBOX_BODY, b.eventId));
    await e.query('UPDATE inbox_events SET body = ? WHERE event_id = ?', resealed, b.eventId);
    const intake = await e.stores.queue.intake();
    expect(intake.events.map((x) => x.inboxId)).toEqual([a.inboxId]);
    expect(intake.dead).toEqual([{ eventId: b.eventId, reason: expect.stringMatching(/^data_key_missing: .*k-lost/) }]);
  });

  it('stops intake as an incident, taking nothing in, when no body opens for want of a key', async () => {
    e = await engine.open({ sealer: await sealerOf('k-b') });
    const { eventId } = await e.store(markedEvent('apt_1'));
    // Written by a process sealing under k-a, a key this one was not given.
    const other = await sealerOf('k-a');
    await e.query('UPDATE inbox_events SET body = ? WHERE event_id = ?', await other.sealBytes(Buffer.from('{}'), sealContext(INBOX_BODY, eventId)), eventId);
    await expect(e.stores.queue.intake()).rejects.toBeInstanceOf(DataKeysIncidentError);
    expect(await e.query('SELECT inbox_id FROM processing')).toEqual([]);
  });
});
