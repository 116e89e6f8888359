// The MLLP client against stand-in EMR listeners on loopback: the acknowledgment deadline (late, never,
// wrong MSA-2), a connection dropped mid-message, one message in flight first in first out, reconnecting
// after a restart, backoff after a refused connect on the injected clock, and close().
import { Hl7Message } from '@medplum/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../../src/clock.ts';
import { createMllpClient, type MllpClient, type MllpClientOptions } from '../../../../src/emr/hl7v2/mllp/client.ts';
import { MllpError } from '../../../../src/emr/hl7v2/mllp/errors.ts';
import { startMllpListener } from '../../../../src/emr/hl7v2/mllp/listener.ts';
import { captureLogger } from '../../../support/log-capture.ts';
import { waitFor } from '../../../support/wait.ts';
import { ack, adt, controlIdOf, freePort, type ReceivingPeer, reply, sleep, startReceivingPeer } from './support/peers.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function client(port: number, overrides: Partial<MllpClientOptions> = {}): MllpClient {
  const created = createMllpClient({ url: `mllp://127.0.0.1:${port}`, ackTimeoutMs: 2_000, clock: createManualClock(), ...overrides });
  cleanup.push(() => created.close());
  return created;
}

async function peer(...args: Parameters<typeof startReceivingPeer>): Promise<ReceivingPeer> {
  const started = await startReceivingPeer(...args);
  cleanup.push(() => started.close());
  return started;
}

/**
 * A listener closing its side resolves close() before the client's socket has read the FIN (same process,
 * same loop turn); a real restart takes longer. A send in that gap fails 'closed' and the caller retries.
 */
const clientSeesClose = () => sleep(20);

const message = (id: string, opts: Parameters<typeof adt>[1] = {}) => Hl7Message.parse(adt(id, opts));
const msa = (m: Hl7Message) => [
  m.getSegment('MSA')!.getField(1)!.toString(),
  m.getSegment('MSA')!.getField(2)!.toString(),
  m.getSegment('MSA')!.getField(3)?.toString() ?? '',
];

describe('acknowledgments', () => {
  it('resolves with the ACK whose MSA-2 is the message MSH-10, whatever its code (CA included)', async () => {
    const codes = ['AA', 'AE', 'CA'];
    const emr = await peer(({ text, socket }) => reply(socket, ack(controlIdOf(text), codes.shift())));
    const sender = client(emr.port);
    expect(msa(await sender.send(message('A1')))).toEqual(['AA', 'A1', '']);
    expect(msa(await sender.send(message('A2')))).toEqual(['AE', 'A2', '']);
    expect(msa(await sender.send(message('A3')))).toEqual(['CA', 'A3', '']);
    expect(emr.connections).toHaveLength(1);
  });

  it('rejects with timeout when the ACK comes late, drops the connection, and gives the next attempt its own ACK, not the late one', async () => {
    const emr = await peer(({ text, socket, connection }) => {
      // Both attempts carry the same MSH-10 (a resend). The late ACK (600 ms after the first) would come
      // before the resend's own (300 ms after it, some 700 ms after the first) if the connection were kept.
      const id = controlIdOf(text);
      if (connection === 1) setTimeout(() => reply(socket, ack(id, 'AA', 'late')), 600);
      else setTimeout(() => reply(socket, ack(id, 'AA', 'fresh')), 300);
    });
    const sender = client(emr.port, { ackTimeoutMs: 400 });
    const started = performance.now();
    await expect(sender.send(message('SAME'))).rejects.toMatchObject({ kind: 'timeout' });
    expect(performance.now() - started).toBeLessThan(550);
    await waitFor(() => emr.connections[0]!.closedAt, 2_000, 5);

    const resend = await sender.send(message('SAME')).catch((err: unknown) => err);
    expect(resend).toBeInstanceOf(Hl7Message);
    expect(msa(resend as Hl7Message)).toEqual(['AA', 'SAME', 'fresh']);
    expect(emr.frames.map((f) => f.connection)).toEqual([1, 2]);
  });

  it('rejects with timeout when no ACK ever comes', async () => {
    const emr = await peer(() => undefined);
    const sender = client(emr.port, { ackTimeoutMs: 100 });
    await expect(sender.send(message('NEVER'))).rejects.toMatchObject({ kind: 'timeout' });
    await waitFor(() => emr.connections[0]!.closedAt, 2_000, 5);
  });

  it('rejects with timeout when the only ACK names another message in MSA-2', async () => {
    const emr = await peer(({ socket }) => reply(socket, ack('SOMEONE-ELSE')));
    const sender = client(emr.port, { ackTimeoutMs: 150 });
    await expect(sender.send(message('MINE'))).rejects.toMatchObject({ kind: 'timeout' });
  });
});

describe('a connection dropped mid-message', () => {
  it('rejects the send in flight with closed when the peer closes after reading the message', async () => {
    const emr = await peer(({ socket }) => socket.destroy());
    const sender = client(emr.port);
    const started = performance.now();
    await expect(sender.send(message('DROPPED'))).rejects.toMatchObject({ kind: 'closed' });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('rejects with closed when the peer closes halfway through its ACK, and the next send connects again', async () => {
    const emr = await peer(({ text, socket, connection }) => {
      const full = Buffer.from(`\x0b${ack(controlIdOf(text))}\x1c\r`);
      if (connection === 1) socket.end(full.subarray(0, 20));
      else socket.write(full);
    });
    const sender = client(emr.port);
    await expect(sender.send(message('HALF'))).rejects.toMatchObject({ kind: 'closed' });
    expect(msa(await sender.send(message('WHOLE')))).toEqual(['AA', 'WHOLE', '']);
    expect(emr.connections).toHaveLength(2);
  });
});

describe('one message in flight, first in first out', () => {
  it('sends three messages issued at once strictly one after the other, each only after the previous ACK', async () => {
    const ackedAt: number[] = [];
    const emr = await peer(({ text, socket }) =>
      setTimeout(() => {
        ackedAt.push(performance.now());
        reply(socket, ack(controlIdOf(text)));
      }, 50),
    );
    const sender = client(emr.port);
    const results = await Promise.all(['F1', 'F2', 'F3'].map((id) => sender.send(message(id))));
    expect(results.map((r) => msa(r)[1])).toEqual(['F1', 'F2', 'F3']);
    expect(emr.frames.map((f) => controlIdOf(f.text))).toEqual(['F1', 'F2', 'F3']);
    expect(emr.frames[1]!.at).toBeGreaterThanOrEqual(ackedAt[0]!);
    expect(emr.frames[2]!.at).toBeGreaterThanOrEqual(ackedAt[1]!);
    expect(emr.connections).toHaveLength(1);
  });

  it('goes on with the next message after one fails', async () => {
    const emr = await peer(({ text, socket }) => {
      if (controlIdOf(text) !== 'SILENT') reply(socket, ack(controlIdOf(text)));
    });
    const sender = client(emr.port, { ackTimeoutMs: 100 });
    const [first, second] = await Promise.allSettled([sender.send(message('SILENT')), sender.send(message('ANSWERED'))]);
    expect(first).toMatchObject({ status: 'rejected', reason: { kind: 'timeout' } });
    expect(second).toMatchObject({ status: 'fulfilled' });
    expect(emr.frames.map((f) => [controlIdOf(f.text), f.connection])).toEqual([
      ['SILENT', 1],
      ['ANSWERED', 2],
    ]);
  });
});

describe('connecting', () => {
  const restartable = (taken: { id: string; peer: string }[]) => (port: number) =>
    startMllpListener({
      host: '127.0.0.1',
      port,
      maxMessageBytes: 1024 * 1024,
      logger: captureLogger().logger,
      onMessage: async (m, meta) => {
        taken.push({ id: m.getSegment('MSH')!.getField(10)!.toString(), peer: meta.peer });
        return m.buildAck({ ackCode: 'AA' });
      },
    });

  it('connects again on the next send after the listener restarted on the same port while it was idle', async () => {
    const taken: { id: string; peer: string }[] = [];
    const start = restartable(taken);
    let listener = await start(0);
    cleanup.push(() => listener.close());
    const sender = client(listener.port);
    expect(msa(await sender.send(message('R1')))[0]).toBe('AA');
    await listener.close();
    listener = await start(listener.port);
    await clientSeesClose();
    expect(msa(await sender.send(message('R2')))[0]).toBe('AA');
    expect(taken.map((t) => t.id)).toEqual(['R1', 'R2']);
    expect(taken[1]!.peer).not.toBe(taken[0]!.peer);
  });

  it('connects again once the backoff is over when a send found the listener down during its restart', async () => {
    const clock = createManualClock();
    const taken: { id: string; peer: string }[] = [];
    const start = restartable(taken);
    let listener = await start(0);
    cleanup.push(() => listener.close());
    const sender = client(listener.port, { clock, backoff: { baseMs: 500, maxMs: 5_000 } });
    await sender.send(message('UP'));
    await listener.close();
    await clientSeesClose();
    await expect(sender.send(message('DOWN'))).rejects.toMatchObject({ kind: 'unreachable' });
    listener = await start(listener.port);
    await expect(sender.send(message('DOWN'))).rejects.toMatchObject({ kind: 'unreachable' });
    clock.advance(500);
    expect(msa(await sender.send(message('DOWN')))).toEqual(['AA', 'DOWN', 'OK']);
    expect(taken.map((t) => t.id)).toEqual(['UP', 'DOWN']);
  });

  it('after a refused connect fails fast as unreachable until the backoff is over, doubling it up to maxMs, and resets it on success', async () => {
    const clock = createManualClock();
    const port = await freePort();
    const sender = client(port, { clock, backoff: { baseMs: 1_000, maxMs: 3_000 } });
    const tried = { cause: expect.objectContaining({ code: 'ECONNREFUSED' }) };
    const fastFail = async () => {
      const started = performance.now();
      const err = await sender.send(message('B')).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'unreachable' });
      expect((err as Error).cause).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(50);
    };

    await expect(sender.send(message('B'))).rejects.toMatchObject({ kind: 'unreachable', ...tried });
    await fastFail();
    clock.advance(999);
    await fastFail();
    clock.advance(1);
    await expect(sender.send(message('B'))).rejects.toMatchObject({ kind: 'unreachable', ...tried });
    clock.advance(1_999);
    await fastFail();
    clock.advance(1);
    await expect(sender.send(message('B'))).rejects.toMatchObject({ kind: 'unreachable', ...tried });
    // 4 000 would be next; maxMs holds it at 3 000.
    clock.advance(2_999);
    await fastFail();

    const emr = await peer(({ text, socket }) => reply(socket, ack(controlIdOf(text))), port);
    await fastFail();
    expect(emr.connections).toHaveLength(0);
    clock.advance(1);
    expect(msa(await sender.send(message('UP')))).toEqual(['AA', 'UP', '']);

    // Back to baseMs after the success: 1 000 ms and it tries again.
    await emr.close();
    await clientSeesClose();
    await expect(sender.send(message('B'))).rejects.toMatchObject({ kind: 'unreachable', ...tried });
    clock.advance(999);
    await fastFail();
    clock.advance(1);
    await expect(sender.send(message('B'))).rejects.toMatchObject({ kind: 'unreachable', ...tried });
  });

  it('gives up connecting after connectTimeoutMs as unreachable (a TLS peer that never answers the handshake)', async () => {
    const silent = await peer(() => undefined);
    const sender = createMllpClient({ url: `mllps://127.0.0.1:${silent.port}`, ackTimeoutMs: 1_000, connectTimeoutMs: 150, clock: createManualClock() });
    cleanup.push(() => sender.close());
    const started = performance.now();
    await expect(sender.send(message('HELLO'))).rejects.toMatchObject({ kind: 'unreachable', message: expect.stringContaining('within 150 ms') });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('errors and encoding', () => {
  it('names host:port in its errors and never the message content', async () => {
    const port = await freePort();
    const err = await client(port)
      .send(message('SECRET', { name: 'Müller^Zoë' }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MllpError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    expect((err as Error).message).not.toMatch(/Müller|SECRET|PID/);
  });

  it('encodes with its encoding: latin1 puts ISO-8859-1 bytes on the wire', async () => {
    const emr = await peer(({ text, socket }) => reply(socket, ack(controlIdOf(text))));
    const sender = client(emr.port, { encoding: 'latin1' });
    await sender.send(message('LATIN', { charset: '8859/1', name: 'Müller^Zoë' }));
    expect(emr.frames[0]!.bytes.includes(Buffer.from('M\xfcller^Zo\xeb', 'latin1'))).toBe(true);
  });

  it('refuses a message without MSH-10 before sending anything', async () => {
    const emr = await peer(() => undefined);
    const sender = client(emr.port);
    await expect(sender.send(Hl7Message.parse('MSH|^~\\&|A|B|C|D|20260115||ADT^A31|'))).rejects.toThrow(TypeError);
    expect(emr.connections).toHaveLength(0);
  });
});

describe('close()', () => {
  it('rejects the send in flight and those queued behind it with closed, and every later send', async () => {
    const emr = await peer(() => undefined);
    const sender = client(emr.port, { ackTimeoutMs: 5_000 });
    const inFlight = sender.send(message('C1'));
    const queued = sender.send(message('C2'));
    await waitFor(() => emr.frames.length === 1);
    await sender.close();
    await expect(inFlight).rejects.toMatchObject({ kind: 'closed' });
    await expect(queued).rejects.toMatchObject({ kind: 'closed' });
    await expect(sender.send(message('C3'))).rejects.toMatchObject({ kind: 'closed' });
    await waitFor(() => emr.connections[0]!.closedAt, 2_000, 5);
    expect(emr.frames).toHaveLength(1);
  });
});
