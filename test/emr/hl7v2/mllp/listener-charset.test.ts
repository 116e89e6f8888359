// Character sets at the listener: MSH-18 decides how a message's bytes are read (8859/1 as ISO-8859-1,
// UNICODE UTF-8 or nothing as UTF-8); a charset it does not read is refused with AE, not guessed.
import { Hl7Message } from '@medplum/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../../src/clock.ts';
import { createMllpClient } from '../../../../src/emr/hl7v2/mllp/client.ts';
import { type MllpListenerOptions, startMllpListener } from '../../../../src/emr/hl7v2/mllp/listener.ts';
import { captureLogger } from '../../../support/log-capture.ts';
import { adt, connectPeer, createFrameReader, frame, msaOf } from './support/peers.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function listen(onMessage?: MllpListenerOptions['onMessage']) {
  const names: string[] = [];
  const listener = await startMllpListener({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 64 * 1024,
    logger: captureLogger().logger,
    onMessage:
      onMessage ??
      (async (message) => {
        names.push(message.getSegment('PID')!.getField(5)!.toString());
        return message.buildAck({ ackCode: 'AA' });
      }),
  });
  cleanup.push(() => listener.close());
  return { listener, names };
}

async function send(port: number, bytes: Buffer) {
  const peer = await connectPeer(port);
  cleanup.push(() => peer.end());
  await peer.write(bytes);
  return peer;
}

describe('reading a message in the charset MSH-18 declares', () => {
  it('reads ISO-8859-1 bytes declared 8859/1: PID-5 Müller^Zoë arrives intact', async () => {
    const { listener, names } = await listen();
    const peer = await send(listener.port, frame(adt('LATIN-1', { charset: '8859/1', name: 'Müller^Zoë' }), 'latin1'));
    const [ack] = await peer.waitForAcks(1);
    expect(msaOf(ack!)[0]).toBe('AA');
    expect(names).toEqual(['Müller^Zoë']);
  });

  it('reads UTF-8 bytes declared UNICODE UTF-8, or declaring nothing, as UTF-8', async () => {
    const { listener, names } = await listen();
    const peer = await send(
      listener.port,
      Buffer.concat([frame(adt('UTF-8', { charset: 'UNICODE UTF-8', name: 'Müller^Zoë' })), frame(adt('NONE', { name: 'Łukasz^Nguyễn' }))]),
    );
    await peer.waitForAcks(2);
    expect(names).toEqual(['Müller^Zoë', 'Łukasz^Nguyễn']);
  });

  it('takes what a latin1 client sends declared 8859/1', async () => {
    const { listener, names } = await listen();
    const sender = createMllpClient({ url: `mllp://127.0.0.1:${listener.port}`, encoding: 'latin1', ackTimeoutMs: 2_000, clock: createManualClock() });
    cleanup.push(() => sender.close());
    await sender.send(Hl7Message.parse(adt('CLIENT-LATIN-1', { charset: '8859/1', name: 'Müller^Zoë' })));
    expect(names).toEqual(['Müller^Zoë']);
  });
});

describe('a message it cannot read', () => {
  it('answers AE with an ERR at MSH-18 for a charset it does not read, without calling the handler', async () => {
    const { listener, names } = await listen();
    const peer = await send(listener.port, frame(adt('JIS', { charset: 'ISO IR87' }), 'latin1'));
    const [ack] = await peer.waitForAcks(1);
    expect(msaOf(ack!).slice(0, 2)).toEqual(['AE', 'JIS']);
    expect(ack).toMatch(/\rERR\|\|MSH\^1\^18\|103\^Table value not found\^HL70357\|E\|/);
    expect(names).toEqual([]);
  });

  it('answers AE for bytes that are not UTF-8 in a message declaring no charset', async () => {
    const { listener, names } = await listen();
    const peer = await send(listener.port, frame(adt('MISLABELLED', { name: 'Müller^Zoë' }), 'latin1'));
    const [ack] = await peer.waitForAcks(1);
    expect(msaOf(ack!).slice(0, 2)).toEqual(['AE', 'MISLABELLED']);
    expect(names).toEqual([]);
  });
});

describe('the acknowledgment', () => {
  it('goes out in the charset it declares: an 8859/1 ACK in ISO-8859-1 bytes', async () => {
    const { listener } = await listen(async (message) =>
      Hl7Message.parse(
        `MSH|^~\\&|EMR-BRIDGE|SERVICE|EMR|HOSPITAL|20260115100000||ACK^A31^ACK|A-1|P|2.5.1||||||8859/1\rMSA|AE|${message.getSegment('MSH')!.getField(10)!.toString()}|Patient Müller unbekannt`,
      ),
    );
    const peer = await connectPeer(listener.port);
    cleanup.push(() => peer.end());
    const raw: Buffer[] = [];
    peer.socket.on(
      'data',
      createFrameReader((body) => raw.push(Buffer.from(body))),
    );
    await peer.write(frame(adt('ACK-LATIN-1')));
    await peer.waitForAcks(1);
    expect(raw[0]!.includes(Buffer.from('M\xfcller', 'latin1'))).toBe(true);
    expect(raw[0]!.toString('latin1')).toContain('|Patient Müller unbekannt');
  });
});
