// The bundled HL7 EMR taking the adapter's ADT and SIU over MLLP: it acknowledges in original mode, assigns
// MRNs and filler ids, keys appointments by SCH-1, applies a repeated MSH-10 once, refuses what it cannot use
// with AE naming the field, and notifies its target with both ids.
import { describe, expect, it } from 'vitest';
import { ackCode, adt, clientOf, field, send, siu, startEmr, startTarget, waitFor } from './support.ts';

describe('the bundled HL7 EMR takes patients', () => {
  it('acknowledges an A28 AA with its MSH-10, assigns an MRN and notifies an A28 carrying both ids', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const msg = adt('A28', { id: 'CTRL-A28-1', serviceId: 'pat-1', name: 'Doe^Jane', phone: '+15550100001' });
    const ack = await send(clientOf(emr), msg);
    expect(ackCode(ack)).toBe('AA');
    expect(field(ack, 'MSA', 2)).toBe('CTRL-A28-1');
    expect(emr.patients()).toEqual([{ serviceId: 'pat-1', mrn: expect.stringMatching(/^MRN\d{6}$/), name: 'Doe^Jane', phone: '+15550100001' }]);
    const mrn = emr.patients()[0]!.mrn;
    const [note] = await waitFor(() => (target.received.length ? target.received : undefined));
    expect(field(note!, 'MSH', 9)).toBe('ADT^A28^ADT_A05');
    expect(field(note!, 'PID', 3)).toBe(`pat-1^^^SERVICE^PI~${mrn}^^^HOSPITAL^MR`);
    expect(field(note!, 'PID', 5)).toBe('Doe^Jane');
    expect(field(note!, 'PID', 13)).toBe('+15550100001');
    await waitFor(() => emr.pendingNotifications() === 0);
  });

  it('updates name and phone on an A31 and notifies an A31; the MRN stays', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-2', name: 'Roe^Ann' }));
    const { mrn } = emr.patients()[0]!;
    expect(ackCode(await send(client, adt('A31', { serviceId: 'pat-2', name: 'Roe^Anne', phone: '+15550100002' })))).toBe('AA');
    expect(emr.patients()).toEqual([{ serviceId: 'pat-2', mrn, name: 'Roe^Anne', phone: '+15550100002' }]);
    const notes = await waitFor(() => (target.received.length === 2 ? target.received : undefined));
    expect(notes.map((m) => field(m, 'MSH', 9))).toEqual(['ADT^A28^ADT_A05', 'ADT^A31^ADT_A05']);
    expect(field(notes[1]!, 'PID', 5)).toBe('Roe^Anne');
  });

  it('applies a message sent again with the same MSH-10 once, acknowledging it AA both times', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    const msg = adt('A28', { id: 'CTRL-DUP-1', serviceId: 'pat-3' });
    expect(ackCode(await send(client, msg))).toBe('AA');
    const again = await send(client, msg);
    expect(ackCode(again)).toBe('AA');
    expect(field(again, 'MSA', 2)).toBe('CTRL-DUP-1');
    expect(emr.patients()).toHaveLength(1);
    expect(emr.received().map((r) => [r.type, r.controlId, r.duplicate])).toEqual([
      ['ADT^A28', 'CTRL-DUP-1', false],
      ['ADT^A28', 'CTRL-DUP-1', true],
    ]);
    await waitFor(() => emr.pendingNotifications() === 0);
    expect(target.received).toHaveLength(1);
  });

  it('refuses AE, naming PID-3 in the ERR, a patient without an id under its assigning authority', async () => {
    const emr = await startEmr();
    const client = clientOf(emr);
    for (const msg of [adt('A28', {}), adt('A28', { serviceId: 'pat-x', authority: 'OTHER' })]) {
      const ack = await send(client, msg);
      expect(ackCode(ack)).toBe('AE');
      expect(field(ack, 'ERR', 2)).toBe('PID^1^3');
      expect(field(ack, 'ERR', 8)).toContain('PID-3');
    }
    expect(emr.patients()).toEqual([]);
  });

  it('takes its assigning authority from the options', async () => {
    const emr = await startEmr({ assigningAuthority: 'CLINIC' });
    expect(ackCode(await send(clientOf(emr), adt('A04', { serviceId: 'pat-c', authority: 'CLINIC' })))).toBe('AA');
    expect(emr.patients().map((p) => p.serviceId)).toEqual(['pat-c']);
  });

  it('refuses AE, naming MSH-9, a trigger it does not take', async () => {
    const emr = await startEmr();
    const ack = await send(clientOf(emr), adt('A40', { serviceId: 'pat-4' }));
    expect(ackCode(ack)).toBe('AE');
    expect(field(ack, 'ERR', 2)).toBe('MSH^1^9');
  });
});

describe('the bundled HL7 EMR takes appointments', () => {
  it('assigns a filler id to an S12, keeps AIP-3 and AIL-3 as received, and notifies an S12 with SCH-1, SCH-2 and both patient ids', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    await send(client, adt('A28', { serviceId: 'pat-5' }));
    const ack = await send(client, siu('S12', { appointmentId: 'apt-5', patientServiceId: 'pat-5', start: '20260120093000+0100' }));
    expect(ackCode(ack)).toBe('AA');
    const [appointment] = emr.appointments();
    expect(appointment).toEqual({
      serviceId: 'apt-5',
      fillerId: expect.stringMatching(/^APT\d{6}$/),
      start: '20260120093000+0100',
      status: 'Booked',
      cancelled: false,
      patientServiceId: 'pat-5',
      doctor: 'doc-1^Smith^John',
      location: 'loc-1',
    });
    const notes = await waitFor(() => (target.received.length === 2 ? target.received : undefined));
    const note = notes[1]!;
    expect(field(note, 'MSH', 9)).toBe('SIU^S12^SIU_S12');
    expect(field(note, 'SCH', 1)).toBe('apt-5^SERVICE');
    expect(field(note, 'SCH', 2)).toBe(`${appointment!.fillerId}^HOSPITAL`);
    expect(field(note, 'PID', 3)).toBe(`pat-5^^^SERVICE^PI~${emr.patients()[0]!.mrn}^^^HOSPITAL^MR`);
    expect(field(note, 'TQ1', 7)).toBe('20260120093000+0100');
  });

  it('applies an S13 and an S15 with an empty SCH-2 to the appointment of their SCH-1', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    await send(client, siu('S12', { appointmentId: 'apt-6' }));
    const { fillerId } = emr.appointments()[0]!;
    expect(ackCode(await send(client, siu('S13', { appointmentId: 'apt-6', start: '20260121110000+0100' })))).toBe('AA');
    expect(emr.appointments()).toMatchObject([{ serviceId: 'apt-6', fillerId, start: '20260121110000+0100', cancelled: false }]);
    expect(ackCode(await send(client, siu('S15', { appointmentId: 'apt-6', status: 'Cancelled' })))).toBe('AA');
    expect(emr.appointments()).toMatchObject([{ serviceId: 'apt-6', fillerId, status: 'Cancelled', cancelled: true }]);
    const notes = await waitFor(() => (target.received.length === 3 ? target.received : undefined));
    expect(notes.map((m) => field(m, 'MSH', 9))).toEqual(['SIU^S12^SIU_S12', 'SIU^S13^SIU_S12', 'SIU^S15^SIU_S12']);
    expect(notes.map((m) => field(m, 'SCH', 2))).toEqual(Array(3).fill(`${fillerId}^HOSPITAL`));
    expect(field(notes[2]!, 'SCH', 25)).toBe('Cancelled');
  });

  it('makes no second appointment for an S12 sent again with a new MSH-10 and the same SCH-1', async () => {
    const target = await startTarget();
    const emr = await startEmr({ notify: target.url });
    const client = clientOf(emr);
    await send(client, siu('S12', { appointmentId: 'apt-7' }));
    expect(ackCode(await send(client, siu('S12', { appointmentId: 'apt-7' })))).toBe('AA');
    expect(emr.appointments()).toHaveLength(1);
    await waitFor(() => emr.pendingNotifications() === 0);
    expect(target.received).toHaveLength(1);
  });

  it('refuses AE, naming SCH-1, an SIU without SCH-1 or a change to an appointment it does not hold', async () => {
    const emr = await startEmr();
    const client = clientOf(emr);
    const missing = await send(client, siu('S12', {}));
    expect(ackCode(missing)).toBe('AE');
    expect(field(missing, 'ERR', 2)).toBe('SCH^1^1');
    const unknown = await send(client, siu('S14', { appointmentId: 'apt-none', status: 'Complete' }));
    expect(ackCode(unknown)).toBe('AE');
    expect(field(unknown, 'ERR', 8)).toContain('SCH-1');
    expect(emr.appointments()).toEqual([]);
  });
});
