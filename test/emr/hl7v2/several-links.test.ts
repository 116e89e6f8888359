// The HL7 v2 port on several MLLP links (HL7_SEND_CONNECTIONS): the setting (default 1, 1 to 32), claims made
// together carried by four links to the bundled HL7 EMR, which gives each patient and appointment its own MRN
// and filler id; a message sent again after its link dropped carries the same MSH-10 on another link; the
// links reported (configured, connected) and closed with the port.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { parseConfig } from '../../../src/config.ts';
import type { AppointmentInput } from '../../../src/emr/port.ts';
import { createHl7Emr, type Hl7Emr } from '../../../src/emr/hl7v2/index.ts';
import { emrSettings } from '../../../src/emr/settings.ts';
import { startHl7Emr } from '../../../src/hl7-emr/server.ts';
import { silentLogger } from '../../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../../src/paths.ts';
import { openDatabase } from '../../../src/sqlite/open.ts';
import { createSqliteEmrState } from '../../../src/storage/sqlite/emr-state.ts';
import { ack, controlIdOf, reply, startReceivingPeer } from './mllp/support/peers.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const baseSettings = { EMR_PROTOCOL: 'hl7v2', HL7_LISTEN_HOST: '127.0.0.1', HL7_LISTEN_PORT: '0', SERVICE_BASE_URL: 'bundled' };
const hl7Settings = (env: Record<string, string>) => emrSettings(parseConfig({ ...baseSettings, HL7_SEND_URL: 'mllp://127.0.0.1:9', ...env }).emr, 'hl7v2');

async function portTo(url: string, connections: number): Promise<Hl7Emr> {
  const clock = createManualClock();
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  closers.push(async () => db.close());
  const port = await createHl7Emr({
    settings: hl7Settings({ HL7_SEND_CONNECTIONS: String(connections), HL7_ACK_TIMEOUT_MS: '2000' }),
    sendUrl: () => url,
    tls: {},
    clock,
    logger: silentLogger(),
  });
  closers.push(() => port.close());
  await port.start!({
    state: createSqliteEmrState(db, clock)('hl7v2'),
    recordIdentified: async () => undefined,
    documentPushed: async () => undefined,
    documentCancelled: async () => 'unknown',
  });
  return port;
}

const appointment = (n: number): AppointmentInput => ({
  serviceId: `apt-${n}`,
  status: 'Approved',
  startsAt: '2026-03-01T09:00:00.000Z',
  startsAtLocal: '2026-03-01T10:00:00.000+01:00',
  mode: 'Offline',
  token: `T-${n}`,
  notes: '',
  payment: { type: 'Unpaid', amountPaid: 0, balanceDue: 20, currency: 'EUR', payAtClinic: true },
  patientId: `pat-${n}`,
  practitionerId: 'doc-1',
  locationId: 'loc-1',
  occurredAt: '2026-02-15T10:00:00.000Z',
});

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('HL7_SEND_CONNECTIONS', () => {
  it('is 1 unless set, takes 1 to 32, and refuses anything else before anything starts', () => {
    expect(hl7Settings({}).sendConnections).toBe(1);
    expect(hl7Settings({ HL7_SEND_CONNECTIONS: '32' }).sendConnections).toBe(32);
    for (const bad of ['0', '33', '2.5', 'four']) expect(() => hl7Settings({ HL7_SEND_CONNECTIONS: bad }), bad).toThrow(/HL7_SEND_CONNECTIONS/);
  });
});

describe('the port on four links to the bundled HL7 EMR', () => {
  it('carries claims made together on four links at once, and the EMR gives each patient and appointment its own MRN and filler id', async () => {
    const emr = await startHl7Emr({ logger: silentLogger() });
    closers.push(() => emr.close());
    const port = await portTo(emr.url, 4);
    expect(port.links()).toEqual({ configured: 4, connected: 0 });
    // Each acknowledgment 100 ms late: eight claims made together need every link.
    emr.setFault({ mode: 'late', delayMs: 100, count: 16 });
    await Promise.all(range(8).map((n) => port.ensurePatient({ serviceId: `pat-${n}`, name: `Patient ${n}`, phone: `+1555000000${n}` })));
    expect(port.links()).toEqual({ configured: 4, connected: 4 });
    await Promise.all(range(8).map((n) => port.ensureAppointment(appointment(n))));

    const mrns = emr.patients().map((p) => p.mrn);
    expect(new Set(mrns).size).toBe(8);
    expect(mrns.toSorted()).toEqual(range(8).map((n) => `MRN00000${n}`));
    const appointments = emr.appointments();
    expect(appointments.map((a) => a.fillerId).toSorted()).toEqual(range(8).map((n) => `APT00000${n}`));
    for (const a of appointments) expect(a.patientServiceId).toBe(a.serviceId.replace('apt-', 'pat-'));
    expect(emr.received().filter((r) => r.duplicate)).toEqual([]);

    await port.close();
    expect(port.links()).toEqual({ configured: 4, connected: 0 });
  });
});

describe('a message sent again', () => {
  it('carries the same MSH-10 on whichever link takes it after its own dropped', async () => {
    let dropped = false;
    const listener = await startReceivingPeer(({ text, socket }) => {
      if (text.includes('pat-drop') && !dropped) {
        dropped = true;
        socket.destroy();
        return;
      }
      reply(socket, ack(controlIdOf(text)));
    });
    closers.push(() => listener.close());
    const port = await portTo(`mllp://127.0.0.1:${listener.port}`, 4);
    const claims = ['pat-drop', 'pat-a', 'pat-b', 'pat-c'].map((serviceId) => port.ensurePatient({ serviceId, name: 'Doe^Jane', phone: '+15550001111' }));
    const outcomes = await Promise.allSettled(claims);
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: { code: 'emr_unavailable' } });
    expect(outcomes.slice(1).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);

    await port.ensurePatient({ serviceId: 'pat-drop', name: 'Doe^Jane', phone: '+15550001111' });
    const carried = listener.frames.filter((f) => f.text.includes('pat-drop'));
    expect(carried).toHaveLength(2);
    expect(controlIdOf(carried[1]!.text)).toBe(controlIdOf(carried[0]!.text));
    expect(carried[1]!.connection).not.toBe(carried[0]!.connection);
  });
});
