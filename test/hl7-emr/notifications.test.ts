// The bundled HL7 EMR's notifications: one connection, one message at a time, oldest first, each waiting
// for its acknowledgment; one not acknowledged AA (AR, AE, no answer, a target that is down) is sent again,
// the same message, after a backoff, and nothing behind it overtakes it.
import type { Hl7Message } from '@medplum/core';
import { describe, expect, it } from 'vitest';
import { adt, clientOf, field, freePort, send, siu, startEmr, startTarget, waitFor } from './support.ts';

const controlIds = (messages: Hl7Message[]) => messages.map((m) => field(m, 'MSH', 10));
const types = (messages: Hl7Message[]) => messages.map((m) => field(m, 'MSH', 9));

describe('the bundled HL7 EMR notifies', () => {
  it('sends again, in order, what the target refused AR until it accepts', async () => {
    const target = await startTarget();
    target.answer = (_m, n) => (n < 3 ? 'AR' : 'AA');
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-1' }));
    await send(client, siu('S12', { appointmentId: 'apt-1', patientServiceId: 'pat-1' }));
    await waitFor(() => emr.pendingNotifications() === 0);
    const received = target.received;
    // The A28 three times refused, then accepted; only then the S12.
    expect(types(received)).toEqual(['ADT^A28^ADT_A05', 'ADT^A28^ADT_A05', 'ADT^A28^ADT_A05', 'ADT^A28^ADT_A05', 'SIU^S12^SIU_S12']);
    expect(new Set(controlIds(received.slice(0, 4))).size).toBe(1);
    expect(received[0]!.toString()).toBe(received[3]!.toString());
  });

  it('sends again what the target answered AE or did not answer in time', async () => {
    const target = await startTarget();
    target.answer = (_m, n) => (['AE', 'none'] as const)[n] ?? 'AA';
    const emr = await startEmr({ notify: target.url, ackTimeoutMs: 300 });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-2' }));
    await send(client, adt('A31', { serviceId: 'pat-2', name: 'Doe^Janet' }));
    await waitFor(() => emr.pendingNotifications() === 0);
    // AE, no answer, then AA (once more on a machine slow enough to miss 300 ms): the A31 only after.
    const a28 = target.received.filter((m) => field(m, 'MSH', 9) === 'ADT^A28^ADT_A05');
    expect(a28.length).toBeGreaterThanOrEqual(3);
    expect(new Set(controlIds(a28)).size).toBe(1);
    expect(types(target.received).slice(0, a28.length)).toEqual(types(a28));
    expect(types(target.received).at(-1)).toBe('ADT^A31^ADT_A05');
  });

  it('holds its notifications while the target is down and sends them in order once it is up', async () => {
    const port = await freePort();
    const emr = await startEmr({ notify: `mllp://127.0.0.1:${port}` });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-3' }));
    await send(client, siu('S12', { appointmentId: 'apt-3', patientServiceId: 'pat-3' }));
    await send(client, siu('S15', { appointmentId: 'apt-3', patientServiceId: 'pat-3', status: 'Cancelled' }));
    expect(emr.pendingNotifications()).toBe(3);
    await new Promise((r) => setTimeout(r, 100));
    expect(emr.pendingNotifications()).toBe(3);
    const target = await startTarget(port);
    await waitFor(() => emr.pendingNotifications() === 0);
    expect(types(target.received)).toEqual(['ADT^A28^ADT_A05', 'SIU^S12^SIU_S12', 'SIU^S15^SIU_S12']);
  });

  it('reconnects by itself after the target drops the connection', async () => {
    const port = await freePort();
    const first = await startTarget(port);
    const emr = await startEmr({ notify: first.url });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-4' }));
    await waitFor(() => emr.pendingNotifications() === 0);
    await first.close();
    const second = await startTarget(port);
    await send(client, adt('A31', { serviceId: 'pat-4', name: 'Doe^Janet' }));
    await waitFor(() => emr.pendingNotifications() === 0);
    expect(types(second.received)).toEqual(['ADT^A31^ADT_A05']);
  });

  it('queues nothing without a notify target', async () => {
    const emr = await startEmr();
    await send(clientOf(emr), adt('A28', { serviceId: 'pat-5' }));
    expect(emr.pendingNotifications()).toBe(0);
  });
});
