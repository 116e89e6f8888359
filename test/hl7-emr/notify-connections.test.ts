// The bundled HL7 EMR's notifications over several connections (notifyConnections, `--notify-connections`):
// each message on the lane of the entity it is about, every one delivered once, one entity's in queue order;
// a lane whose head is refused or not answered holds that lane only and sends the same message again; with one
// connection, and for queued messages without a key (older data files), exactly the one queue order.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hl7Message } from '@medplum/core';
import { afterAll, describe, expect, it } from 'vitest';
import { laneOf } from '../../src/hl7-emr/lanes.ts';
import { adt, clientOf, field, send, siu, startEmr, startTarget, type TargetAnswer, waitFor } from './support.ts';

const LANES = 4;
const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-hl7-lanes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const controlIdOf = (m: Hl7Message) => field(m, 'MSH', 10);
const typeOf = (m: Hl7Message) => field(m, 'MSH', 9).split('^').slice(0, 2).join('^');

/** The entity a notification is about, as the EMR keys it: SCH-1's id for SIU, the PID-3 service id otherwise. */
function keyOf(m: Hl7Message): string {
  if (m.getSegment('SCH')) return `appointment:${field(m, 'SCH', 1).split('^')[0]}`;
  return `patient:${field(m, 'PID', 3).split('~')[0]!.split('^')[0]}`;
}

/** `count` ids `<prefix>-<n>` whose keys fall on lanes other than `avoid`'s, on distinct lanes when they can. */
function idsOnLanes(kind: 'patient' | 'appointment', prefix: string, count: number, avoid: number[] = []): string[] {
  const taken = new Set(avoid);
  const ids: string[] = [];
  for (let n = 0; ids.length < count && n < 10_000; n++) {
    const lane = laneOf(`${kind}:${prefix}-${n}`, LANES);
    if (taken.has(lane)) continue;
    taken.add(lane);
    ids.push(`${prefix}-${n}`);
  }
  return ids;
}

/** What arrived, grouped by entity, in arrival order. */
function byKey(received: Hl7Message[]): Map<string, Hl7Message[]> {
  const groups = new Map<string, Hl7Message[]>();
  for (const m of received) groups.set(keyOf(m), [...(groups.get(keyOf(m)) ?? []), m]);
  return groups;
}

describe('the bundled HL7 EMR notifying over several connections', () => {
  it('delivers every message once, each entity in queue order, over more than one connection', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url, notifyConnections: LANES });
    const client = clientOf(emr);
    const patients = idsOnLanes('patient', 'pat', LANES);
    const appointments = idsOnLanes('appointment', 'apt', LANES);
    // Interleaved, so that every lane has work while the others do.
    for (const p of patients) await send(client, adt('A28', { serviceId: p }));
    for (const [i, a] of appointments.entries()) await send(client, siu('S12', { appointmentId: a, patientServiceId: patients[i] }));
    for (const [i, p] of patients.entries()) {
      await send(client, adt('A31', { serviceId: p, name: 'Doe^Janet' }));
      await send(client, siu('S13', { appointmentId: appointments[i], patientServiceId: p, start: '20260121093000+0100' }));
      emr.fileDocument({ patientServiceId: p, documentType: 'lab_report', label: 'Ferritin', pdf: Buffer.from('%PDF-1.4\n') });
      await send(client, siu('S15', { appointmentId: appointments[i], patientServiceId: p, status: 'Cancelled' }));
      emr.fileDocument({ patientServiceId: p, documentType: 'prescription', label: 'Rx', pdf: Buffer.from('%PDF-1.4\n') });
    }
    const queued = LANES * 7;
    await waitFor(() => emr.pendingNotifications() === 0);

    const ids = target.received.map(controlIdOf);
    expect(ids).toHaveLength(queued);
    expect(new Set(ids).size).toBe(queued);
    const groups = byKey(target.received);
    for (const p of patients) {
      const got = groups.get(`patient:${p}`)!;
      expect(got.map(typeOf), p).toEqual(['ADT^A28', 'ADT^A31', 'MDM^T02', 'MDM^T02']);
      // The EMR's MSH-10s count up in queue order: arrival order is queue order.
      expect(got.map(controlIdOf)).toEqual(got.map(controlIdOf).toSorted());
    }
    for (const a of appointments) {
      const got = groups.get(`appointment:${a}`)!;
      expect(got.map(typeOf), a).toEqual(['SIU^S12', 'SIU^S13', 'SIU^S15']);
      expect(got.map(controlIdOf)).toEqual(got.map(controlIdOf).toSorted());
    }
    expect(new Set(target.receivedOn).size).toBeGreaterThan(1);
  });

  it.each<[string, TargetAnswer]>([
    ['refused AE', 'AE'],
    ['not acknowledged', 'none'],
  ])('holds only the lane whose head is %s, and sends that same message again once accepted', async (_what, answer) => {
    const target = await startTarget();
    const [held] = idsOnLanes('patient', 'held', 1);
    const others = idsOnLanes('patient', 'other', LANES - 1, [laneOf(`patient:${held}`, LANES)]);
    let holding = true;
    target.answer = (m) => (holding && keyOf(m) === `patient:${held}` ? answer : 'AA');
    const emr = await startEmr({ notify: target.url, notifyConnections: LANES, ...(answer === 'none' ? { ackTimeoutMs: 300 } : {}) });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: held }));
    await send(client, adt('A31', { serviceId: held, name: 'Doe^Janet' }));
    for (const p of others) {
      await send(client, adt('A28', { serviceId: p }));
      await send(client, adt('A31', { serviceId: p, name: 'Doe^Janet' }));
    }

    // The other lanes deliver everything while the held one keeps trying its head.
    await waitFor(() => {
      const groups = byKey(target.received);
      return others.every((p) => groups.get(`patient:${p}`)?.length === 2) && (groups.get(`patient:${held}`)?.length ?? 0) >= 2;
    });
    const tries = byKey(target.received).get(`patient:${held}`)!;
    expect(tries.map(typeOf)).toEqual(tries.map(() => 'ADT^A28'));
    expect(new Set(tries.map(controlIdOf)).size).toBe(1);
    expect(emr.pendingNotifications()).toBe(2);

    holding = false;
    await waitFor(() => emr.pendingNotifications() === 0);
    const got = byKey(target.received).get(`patient:${held}`)!;
    expect(got.map(typeOf).at(-1)).toBe('ADT^A31');
    expect(got.map(typeOf).filter((t) => t === 'ADT^A31')).toHaveLength(1);
    // Every try of the A28 was the same message, the first accepted one included.
    const a28 = got.filter((m) => typeOf(m) === 'ADT^A28');
    expect(a28.length).toBeGreaterThan(tries.length);
    expect(new Set(a28.map((m) => m.toString())).size).toBe(1);
    for (const p of others) expect(byKey(target.received).get(`patient:${p}`)!.map(typeOf)).toEqual(['ADT^A28', 'ADT^A31']);
  });

  it('with one connection (the default) sends every message in queue order, whatever its entity', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    for (const p of idsOnLanes('patient', 'one', LANES)) {
      await send(client, adt('A28', { serviceId: p }));
      await send(client, siu('S12', { appointmentId: `apt-${p}`, patientServiceId: p }));
    }
    await waitFor(() => emr.pendingNotifications() === 0);
    const ids = target.received.map(controlIdOf);
    expect(ids).toHaveLength(2 * LANES);
    expect(ids).toEqual(ids.toSorted());
    expect(new Set(target.receivedOn)).toEqual(new Set([0]));
  });

  it('sends queued messages without a key (an older data file) in their exact order over one connection', async () => {
    const dataFile = join(dir, 'unkeyed.jsonl');
    const old = ['OLD0003', 'OLD0001', 'OLD0002', 'OLD0004'].map((id, n) => ({
      id,
      type: 'ADT^A28^ADT_A05',
      text: adt('A28', { id, serviceId: `old-${n}` }).toString(),
    }));
    writeFileSync(dataFile, `${JSON.stringify({ queued: old })}\n`);
    const target = await startTarget();
    const emr = await startEmr({ dataFile, notify: target.url, notifyConnections: LANES });
    await waitFor(() => emr.pendingNotifications() === 0);
    expect(target.received.map(controlIdOf)).toEqual(['OLD0003', 'OLD0001', 'OLD0002', 'OLD0004']);
    expect(new Set(target.receivedOn)).toEqual(new Set([0]));
  });
});

describe('laneOf', () => {
  it('puts a key on the same lane every time, spreads keys over every lane, and a missing key on lane 0', () => {
    const lanes = Array.from({ length: 200 }, (_v, n) => laneOf(`patient:pat-${n}`, LANES));
    expect(lanes).toEqual(Array.from({ length: 200 }, (_v, n) => laneOf(`patient:pat-${n}`, LANES)));
    expect(new Set(lanes)).toEqual(new Set([0, 1, 2, 3]));
    expect(laneOf(undefined, LANES)).toBe(0);
    expect(laneOf('patient:pat-1', 1)).toBe(0);
  });
});
