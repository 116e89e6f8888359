// The bundled HL7 EMR on several connections at once (an adapter with HL7_SEND_CONNECTIONS > 1): it takes them
// all, handles each one's messages in arrival order with its answers on that connection, holds no connection
// behind another's late answer, and gives every patient and appointment its own MRN and filler id whichever
// connection its message came on.
import net from 'node:net';
import type { Hl7Message } from '@medplum/core';
import { Hl7Connection, type Hl7MessageEvent } from '@medplum/hl7';
import { afterEach, describe, expect, it } from 'vitest';
import { ackCode, adt, field, siu, startEmr, waitFor } from './support.ts';

const lines: Line[] = [];
afterEach(async () => {
  for (const line of lines.splice(0)) await line.close();
});

/** One MLLP connection that writes whatever it is given at once (no waiting for an answer) and keeps the answers. */
interface Line {
  send(msg: Hl7Message): void;
  acks: Hl7Message[];
  /** When each answer arrived (performance.now()), by MSA-2. */
  ackedAt: Map<string, number>;
  close(): Promise<void>;
}

async function openLine(port: number): Promise<Line> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connection = new Hl7Connection(socket);
  const line: Line = {
    send: (msg) => connection.send(msg),
    acks: [],
    ackedAt: new Map(),
    close: async () => {
      socket.destroy();
      await closed;
    },
  };
  connection.addEventListener('message', ({ message }: Hl7MessageEvent) => {
    line.acks.push(message);
    line.ackedAt.set(field(message, 'MSA', 2), performance.now());
  });
  lines.push(line);
  return line;
}

describe('the bundled HL7 EMR on several connections', () => {
  it("handles each connection's messages in arrival order, answering on that connection: an A31 written right behind its A28 applies after it", async () => {
    const emr = await startEmr();
    const [one, two] = [await openLine(emr.port), await openLine(emr.port)];
    one.send(adt('A28', { id: 'ONE-A28', serviceId: 'pat-1', name: 'First^Name' }));
    one.send(adt('A31', { id: 'ONE-A31', serviceId: 'pat-1', name: 'Second^Name' }));
    two.send(adt('A28', { id: 'TWO-A28', serviceId: 'pat-2', name: 'Other^Name' }));
    await waitFor(() => one.acks.length === 2 && two.acks.length === 1);
    expect(one.acks.map((a) => [ackCode(a), field(a, 'MSA', 2)])).toEqual([
      ['AA', 'ONE-A28'],
      ['AA', 'ONE-A31'],
    ]);
    expect(two.acks.map((a) => field(a, 'MSA', 2))).toEqual(['TWO-A28']);
    expect(emr.patients().find((p) => p.serviceId === 'pat-1')?.name).toBe('Second^Name');
  });

  it("holds no connection behind another's late answer", async () => {
    const emr = await startEmr();
    const [slow, quick] = [await openLine(emr.port), await openLine(emr.port)];
    emr.setFault({ mode: 'late', delayMs: 400, count: 1 });
    slow.send(adt('A28', { id: 'SLOW', serviceId: 'pat-slow' }));
    await waitFor(() => emr.received().length === 1, 2_000, 5);
    quick.send(adt('A28', { id: 'QUICK', serviceId: 'pat-quick' }));
    await waitFor(() => slow.acks.length === 1 && quick.acks.length === 1);
    expect(quick.ackedAt.get('QUICK')!).toBeLessThan(slow.ackedAt.get('SLOW')!);
  });

  it('gives every patient and appointment its own MRN and filler id with messages arriving on four connections together', async () => {
    const emr = await startEmr();
    const four = await Promise.all([1, 2, 3, 4].map(() => openLine(emr.port)));
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    four.forEach((line, l) => {
      for (const i of ids(5)) line.send(adt('A28', { serviceId: `pat-${l}-${i}` }));
    });
    await waitFor(() => four.every((line) => line.acks.length === 5));
    four.forEach((line, l) => {
      for (const i of ids(5)) line.send(siu('S12', { appointmentId: `apt-${l}-${i}`, patientServiceId: `pat-${l}-${i}` }));
    });
    await waitFor(() => four.every((line) => line.acks.length === 10));
    expect(four.flatMap((line) => line.acks.map(ackCode)).every((code) => code === 'AA')).toBe(true);

    const mrns = emr.patients().map((p) => p.mrn);
    expect(mrns.toSorted()).toEqual(ids(20).map((n) => `MRN${String(n).padStart(6, '0')}`));
    const appointments = emr.appointments();
    expect(appointments.map((a) => a.fillerId).toSorted()).toEqual(ids(20).map((n) => `APT${String(n).padStart(6, '0')}`));
    for (const a of appointments) expect(a.patientServiceId).toBe(a.serviceId.replace('apt-', 'pat-'));
  });
});
