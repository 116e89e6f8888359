// The bundled HL7 EMR with a data file: a restart keeps the MRNs, the appointments with their filler ids,
// the MSH-10s it applied, and the notifications it had not yet delivered.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ackCode, adt, clientOf, freePort, send, siu, startEmr, startTarget, waitFor } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-hl7-emr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bundled HL7 EMR with a data file', () => {
  it('keeps MRNs, appointments and applied MSH-10s across a restart', async () => {
    const dataFile = join(dir, 'state.jsonl');
    const first = await startEmr({ dataFile });
    const a28 = adt('A28', { serviceId: 'pat-keep' });
    await send(clientOf(first), a28);
    await send(clientOf(first), siu('S12', { appointmentId: 'apt-keep', patientServiceId: 'pat-keep' }));
    const [patient] = first.patients();
    const [appointment] = first.appointments();
    await first.close();

    const second = await startEmr({ dataFile });
    expect(second.patients()).toEqual([patient]);
    expect(second.appointments()).toEqual([appointment]);
    const client = clientOf(second);
    expect(ackCode(await send(client, a28))).toBe('AA');
    expect(second.received()[0]!.duplicate).toBe(true);
    await send(client, adt('A28', { serviceId: 'pat-next' }));
    expect(second.patients().find((p) => p.serviceId === 'pat-next')!.mrn).not.toBe(patient!.mrn);
  });

  it('keeps undelivered notifications and sends them, in order, after a restart', async () => {
    const dataFile = join(dir, 'queue.jsonl');
    const port = await freePort();
    const first = await startEmr({ dataFile, notify: `mllp://127.0.0.1:${port}` });
    await send(clientOf(first), adt('A28', { serviceId: 'pat-q' }));
    await send(clientOf(first), siu('S12', { appointmentId: 'apt-q', patientServiceId: 'pat-q' }));
    expect(first.pendingNotifications()).toBe(2);
    await first.close();

    const target = await startTarget(port);
    const second = await startEmr({ dataFile, notify: target.url });
    await waitFor(() => second.pendingNotifications() === 0);
    expect(target.received.map((m) => m.getSegment('MSH')!.getField(9).toString())).toEqual(['ADT^A28^ADT_A05', 'SIU^S12^SIU_S12']);
  });
});
