// The faults the bundled HL7 EMR plays for tests and QA: AE (with an ERR) and AR refuse without applying;
// late applies and answers after the delay; silent applies and never answers, so a resend of the same
// MSH-10 is acknowledged AA without being applied twice; `count` limits a fault to the next N messages.
import { describe, expect, it } from 'vitest';
import { ackCode, adt, clientOf, field, send, startEmr } from './support.ts';

describe('the bundled HL7 EMR faults', () => {
  it('AE: refuses with an ERR text and applies nothing', async () => {
    const emr = await startEmr();
    emr.setFault({ mode: 'AE' });
    const ack = await send(clientOf(emr), adt('A28', { serviceId: 'pat-ae' }));
    expect(ackCode(ack)).toBe('AE');
    expect(field(ack, 'ERR', 8)).toContain('fault');
    expect(emr.patients()).toEqual([]);
    expect(emr.received().map((r) => r.ack)).toEqual(['AE']);
  });

  it('AR for the next message only (count 1): refused unapplied, then the same message is applied', async () => {
    const emr = await startEmr();
    emr.setFault({ mode: 'AR', count: 1 });
    const client = clientOf(emr);
    const msg = adt('A28', { serviceId: 'pat-ar' });
    expect(ackCode(await send(client, msg))).toBe('AR');
    expect(emr.patients()).toEqual([]);
    expect(emr.fault()).toBeNull();
    expect(ackCode(await send(client, msg))).toBe('AA');
    expect(emr.patients().map((p) => p.serviceId)).toEqual(['pat-ar']);
  });

  it('late: applies at once and acknowledges after the delay', async () => {
    const emr = await startEmr();
    emr.setFault({ mode: 'late', delayMs: 300 });
    const started = performance.now();
    const ack = await send(clientOf(emr), adt('A28', { serviceId: 'pat-late' }));
    expect(ackCode(ack)).toBe('AA');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('silent: applies and never answers; the same MSH-10 sent again is acknowledged AA and not applied twice', async () => {
    const emr = await startEmr();
    emr.setFault({ mode: 'silent', count: 1 });
    const client = clientOf(emr);
    const msg = adt('A28', { id: 'CTRL-SILENT', serviceId: 'pat-silent' });
    await expect(send(client, msg, 300)).rejects.toThrow(/timed out/);
    expect(emr.patients()).toHaveLength(1);
    const ack = await send(client, msg);
    expect(ackCode(ack)).toBe('AA');
    expect(emr.patients()).toHaveLength(1);
    expect(emr.received().map((r) => [r.ack, r.duplicate])).toEqual([
      ['none', false],
      ['AA', true],
    ]);
  });

  it('switched off with mode null', async () => {
    const emr = await startEmr();
    emr.setFault({ mode: 'AE' });
    emr.setFault({ mode: null });
    expect(ackCode(await send(clientOf(emr), adt('A28', { serviceId: 'pat-off' })))).toBe('AA');
  });
});
