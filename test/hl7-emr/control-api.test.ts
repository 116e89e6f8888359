// The bundled HL7 EMR's HTTP control API (/_emr/): what it holds, filing a document (a synthetic PDF when
// none is given), and switching faults, with an unknown field answered 400 naming it.
import { describe, expect, it } from 'vitest';
import { ackCode, adt, clientOf, field, send, siu, startEmr, startTarget, waitFor } from './support.ts';

const call = async (base: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}/_emr${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('the bundled HL7 EMR control API', () => {
  it('shows patients, appointments and received messages', async () => {
    const emr = await startEmr({ controlPort: 0 });
    const base = emr.controlUrl!;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = clientOf(emr);
    await send(client, adt('A28', { id: 'CTRL-API-1', serviceId: 'pat-api' }));
    await send(client, siu('S12', { appointmentId: 'apt-api', patientServiceId: 'pat-api' }));
    expect((await call(base, '/patients')).body).toEqual({ patients: emr.patients() });
    expect((await call(base, '/appointments')).body).toEqual({ appointments: emr.appointments() });
    const received = (await call(base, '/received')).body.received as { type: string; controlId: string }[];
    expect(received.map((r) => r.type)).toEqual(['ADT^A28', 'SIU^S12']);
    expect(received[0]!.controlId).toBe('CTRL-API-1');
    expect((await call(base, '/notifications')).body).toEqual({ pending: 0 });
  });

  it('files a document with a synthetic PDF when none is given', async () => {
    const target = await startTarget();
    const emr = await startEmr({ controlPort: 0, notify: target.url });
    await send(clientOf(emr), adt('A28', { serviceId: 'pat-api' }));
    const filed = await call(emr.controlUrl!, '/documents', { patientServiceId: 'pat-api', documentType: 'lab_report', label: 'CBC' });
    expect(filed.status).toBe(201);
    const mdm = await waitFor(() => target.received.find((m) => field(m, 'MSH', 9) === 'MDM^T02^MDM_T02'));
    expect(field(mdm, 'TXA', 12)).toBe(filed.body.documentId);
    expect(Buffer.from(mdm.getSegment('OBX')!.getField(5).getComponent(5), 'base64').subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('answers 404 for a patient it does not know and 400 naming a missing patient', async () => {
    const target = await startTarget();
    const emr = await startEmr({ controlPort: 0, notify: target.url });
    const unknown = await call(emr.controlUrl!, '/documents', { mrn: 'MRN404404', documentType: 'prescription', label: 'x' });
    expect(unknown.status).toBe(404);
    const none = await call(emr.controlUrl!, '/documents', { documentType: 'prescription', label: 'x' });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: { field: 'patientServiceId' } });
  });

  it('switches a fault on for the next message and answers 400 naming an unknown field', async () => {
    const emr = await startEmr({ controlPort: 0 });
    const set = await call(emr.controlUrl!, '/faults', { mode: 'AR', count: 1 });
    expect(set).toEqual({ status: 200, body: { fault: { mode: 'AR', delayMs: expect.any(Number), remaining: 1 } } });
    const client = clientOf(emr);
    expect(ackCode(await send(client, adt('A28', { serviceId: 'pat-f' })))).toBe('AR');
    expect(ackCode(await send(client, adt('A28', { serviceId: 'pat-f' })))).toBe('AA');
    const bad = await call(emr.controlUrl!, '/faults', { mode: 'AE', delay: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_request', field: 'delay' } });
    expect((await call(emr.controlUrl!, '/faults')).body).toEqual({ fault: null });
  });
});
