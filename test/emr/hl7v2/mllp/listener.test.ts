// The MLLP listener over loopback: @medplum/hl7's framer behind our gate (several frames per read, a frame
// split at every byte, junk between frames, the size limit, a dropped connection), the order and timing
// of acknowledgments, and what it logs.
import type { Hl7Message } from '@medplum/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type MllpListener, type MllpListenerOptions, startMllpListener } from '../../../../src/emr/hl7v2/mllp/listener.ts';
import { captureLogger } from '../../../support/log-capture.ts';
import { waitFor } from '../../../support/wait.ts';
import { adt, connectPeer, frame, msaOf, type SendingPeer, sleep } from './support/peers.ts';

interface Taken {
  controlId: string;
  text: string;
  meta: { peer: string; bytes: number };
}

const open: { listeners: MllpListener[]; peers: SendingPeer[] } = { listeners: [], peers: [] };

afterEach(async () => {
  for (const peer of open.peers.splice(0)) await peer.end();
  for (const listener of open.listeners.splice(0)) await listener.close();
});

async function listen(overrides: Partial<MllpListenerOptions> = {}) {
  const log = captureLogger();
  const taken: Taken[] = [];
  const listener = await startMllpListener({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 64 * 1024,
    logger: log.logger,
    onMessage: async (message: Hl7Message, meta) => {
      taken.push({ controlId: message.getSegment('MSH')!.getField(10)!.toString(), text: message.toString(), meta });
      return message.buildAck({ ackCode: 'AA' });
    },
    ...overrides,
  });
  open.listeners.push(listener);
  return { listener, taken, log };
}

async function peerOf(listener: MllpListener) {
  const peer = await connectPeer(listener.port);
  open.peers.push(peer);
  return peer;
}

const closedLogged = (log: ReturnType<typeof captureLogger>, n = 1) =>
  waitFor(() => log.lines().filter((l) => l.msg === 'MLLP connection closed').length >= n, 5_000, 5);

describe('several frames in one read', () => {
  it.each([2, 10])('hands on and acknowledges each of %i frames written at once, in order', async (n) => {
    const { listener, taken } = await listen();
    const peer = await peerOf(listener);
    const ids = Array.from({ length: n }, (_, i) => `MULTI-${i}`);
    await peer.write(Buffer.concat(ids.map((id) => frame(adt(id)))));
    const acks = await peer.waitForAcks(n);
    expect(taken.map((t) => t.controlId)).toEqual(ids);
    expect(acks.map((a) => msaOf(a).slice(0, 2))).toEqual(ids.map((id) => ['AA', id]));
  });
});

describe('a frame split across reads', () => {
  it('puts together a frame written one byte per write', async () => {
    const { listener, taken } = await listen();
    const peer = await peerOf(listener);
    const bytes = frame(adt('BYTEWISE', { name: 'Müller^Zoë' }));
    for (const byte of bytes) {
      await peer.write(Buffer.from([byte]));
      // Nagle is off; waiting a tick lets each byte be read on its own (gated-connection.test.ts proves
      // the one-byte-per-read case in lockstep).
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [ackText] = await peer.waitForAcks(1);
    expect(msaOf(ackText!).slice(0, 2)).toEqual(['AA', 'BYTEWISE']);
    expect(taken).toHaveLength(1);
    expect(taken[0]!.text).toContain('|Müller^Zoë');
    expect(taken[0]!.meta.bytes).toBe(bytes.length - 3);
  });
});

describe('bytes between frames', () => {
  it('skips junk before, between and after frames and still takes and acknowledges every frame', async () => {
    const { listener, taken } = await listen();
    const peer = await peerOf(listener);
    const junk = (s: string) => Buffer.from(s, 'latin1');
    await peer.write(Buffer.concat([junk('\r\n\0 '), frame(adt('J1')), junk('\r\nnoise\x1c\r\n'), frame(adt('J2')), junk('\0\0')]));
    await peer.write(Buffer.concat([junk('trailing\r\n'), frame(adt('J3'))]));
    const acks = await peer.waitForAcks(3);
    expect(taken.map((t) => t.controlId)).toEqual(['J1', 'J2', 'J3']);
    expect(acks.map((a) => msaOf(a)[1])).toEqual(['J1', 'J2', 'J3']);
  });

  it('closes the connection on a frame that is not HL7, handing on nothing that came with it (the framer drops the whole read)', async () => {
    const { listener, taken, log } = await listen();
    const peer = await peerOf(listener);
    await peer.write(Buffer.concat([frame(adt('BEFORE')), frame('this is not HL7'), frame(adt('AFTER'))]));
    await peer.closed;
    await closedLogged(log);
    expect(taken).toEqual([]);
    expect(log.lines().some((l) => l.msg === 'MLLP frame is not an HL7 message; connection closed')).toBe(true);
  });
});

describe('the size limit', () => {
  const limit = 1_000;
  const sized = (id: string, bytes: number) => {
    const text = adt(id);
    return `${text}\rNTE|1||${'x'.repeat(bytes - text.length - 8)}`;
  };

  it('takes a message of exactly maxMessageBytes', async () => {
    const { listener, taken } = await listen({ maxMessageBytes: limit });
    const peer = await peerOf(listener);
    expect(Buffer.byteLength(sized('EXACT', limit))).toBe(limit);
    await peer.write(frame(sized('EXACT', limit)));
    await peer.waitForAcks(1);
    expect(taken.map((t) => [t.controlId, t.meta.bytes])).toEqual([['EXACT', limit]]);
  });

  it('closes the connection on a larger frame, even one complete in a single read with a good frame behind it, and keeps nothing', async () => {
    const { listener, taken, log } = await listen({ maxMessageBytes: limit });
    const peer = await peerOf(listener);
    await peer.write(Buffer.concat([frame(sized('BIG', limit + 1)), frame(adt('BEHIND'))]));
    await peer.closed;
    await closedLogged(log);
    expect(taken).toEqual([]);
    expect(peer.acks).toEqual([]);
    expect(log.lines().find((l) => l.msg === 'MLLP frame over the size limit; connection closed')).toMatchObject({ bytes: limit + 4 });

    const later = await peerOf(listener);
    await later.write(frame(adt('LATER')));
    await later.waitForAcks(1);
    expect(taken.map((t) => t.controlId)).toEqual(['LATER']);
  });

  it('closes the connection on an unterminated run past the limit, written in pieces', async () => {
    const { listener, taken, log } = await listen({ maxMessageBytes: limit });
    const peer = await peerOf(listener);
    const run = Buffer.from(`\x0b${sized('RUN', 3 * limit)}`, 'latin1');
    for (let i = 0; i < run.length && !peer.socket.destroyed; i += 100) await peer.write(run.subarray(i, i + 100)).catch(() => undefined);
    await peer.closed;
    await closedLogged(log);
    expect(taken).toEqual([]);
  });

  it('takes a 16 MiB frame arriving in 64 KiB writes in linear time (the bare framer needs ~13 s of CPU)', async () => {
    const { listener, taken } = await listen({ maxMessageBytes: 32 * 1024 * 1024 });
    const peer = await peerOf(listener);
    const big = frame(sized('HUGE', 16 * 1024 * 1024));
    const started = performance.now();
    for (let i = 0; i < big.length; i += 64 * 1024) await peer.write(big.subarray(i, i + 64 * 1024));
    await peer.waitForAcks(1, 20_000);
    expect(taken.map((t) => t.controlId)).toEqual(['HUGE']);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('a connection dropped mid-frame', () => {
  it('drops the partial frame: nothing is handed on, and the listener goes on taking other connections', async () => {
    const { listener, taken, log } = await listen();
    const peer = await peerOf(listener);
    const whole = frame(adt('CUT'));
    await peer.write(whole.subarray(0, whole.length - 5));
    await peer.end();
    await closedLogged(log);
    expect(taken).toEqual([]);

    const next = await peerOf(listener);
    await next.write(frame(adt('NEXT')));
    await next.waitForAcks(1);
    expect(taken.map((t) => t.controlId)).toEqual(['NEXT']);
  });
});

describe('acknowledgments', () => {
  it('sends the ACK only once the handler has resolved, and handles one message at a time in order', async () => {
    const releases: (() => void)[] = [];
    const events: string[] = [];
    const { listener } = await listen({
      onMessage: async (message) => {
        const id = message.getSegment('MSH')!.getField(10)!.toString();
        events.push(`start ${id}`);
        await new Promise<void>((resolve) => releases.push(resolve));
        events.push(`end ${id}`);
        return message.buildAck({ ackCode: 'AA' });
      },
    });
    const peer = await peerOf(listener);
    await peer.write(Buffer.concat([frame(adt('FIRST')), frame(adt('SECOND'))]));
    await waitFor(() => releases.length === 1);
    await sleep(100);
    expect(peer.acks).toEqual([]);
    expect(events).toEqual(['start FIRST']);

    releases[0]!();
    await peer.waitForAcks(1);
    await waitFor(() => releases.length === 2);
    expect(events).toEqual(['start FIRST', 'end FIRST', 'start SECOND']);
    expect(peer.acks).toHaveLength(1);
    releases[1]!();
    const acks = await peer.waitForAcks(2);
    expect(acks.map((a) => msaOf(a)[1])).toEqual(['FIRST', 'SECOND']);
  });

  it('answers AR when the handler throws, and logs identifiers only', async () => {
    const { listener, log } = await listen({
      onMessage: async () => {
        throw Object.assign(new Error('insert failed for Müller^Zoë'), { code: 'SQLITE_BUSY' });
      },
    });
    const peer = await peerOf(listener);
    await peer.write(frame(adt('FAILS', { name: 'Müller^Zoë' })));
    const [ackText] = await peer.waitForAcks(1);
    expect(msaOf(ackText!).slice(0, 2)).toEqual(['AR', 'FAILS']);
    const failure = log.lines().find((l) => l.msg === 'MLLP message handler failed; answered AR');
    expect(failure).toMatchObject({ controlId: 'FAILS', err: { type: 'Error', code: 'SQLITE_BUSY' } });
    expect(failure!.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(JSON.stringify(log.lines())).not.toMatch(/Müller|Zoë|Doe|PID\|/);
  });

  it('logs each message by peer, MSH-10 and size, never its content', async () => {
    const { listener, log } = await listen();
    const peer = await peerOf(listener);
    await peer.write(frame(adt('LOGGED', { name: 'Müller^Zoë' })));
    await peer.waitForAcks(1);
    expect(log.lines().find((l) => l.msg === 'MLLP message received')).toMatchObject({ controlId: 'LOGGED', bytes: expect.any(Number) });
    expect(JSON.stringify(log.lines())).not.toMatch(/Müller|Zoë|PID\|/);
  });
});

describe('close()', () => {
  it('stops accepting, closes open connections, and resolves only once they are closed and their handlers settled', async () => {
    let release: (() => void) | undefined;
    let settled = false;
    const { listener } = await listen({
      onMessage: async (message) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        settled = true;
        return message.buildAck({ ackCode: 'AA' });
      },
    });
    const busy = await peerOf(listener);
    const idle = await peerOf(listener);
    await busy.write(frame(adt('INFLIGHT')));
    await waitFor(() => release !== undefined);
    let closed = false;
    const closing = listener.close().then(() => {
      closed = true;
    });
    await Promise.all([busy.closed, idle.closed]);
    await sleep(50);
    expect(closed).toBe(false);
    release!();
    await closing;
    expect(settled).toBe(true);
    // Its connection is gone, so no ACK: the sender resends and the handler sees a repeat.
    expect(busy.acks).toEqual([]);
    await expect(connectPeer(listener.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
