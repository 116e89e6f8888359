// @medplum/hl7's Hl7Connection behind our gate, on a raw loopback socket whose reads the test counts, so
// the chunking is known rather than hoped for: one byte per read, many frames per read.
import net from 'node:net';
import type { Hl7Message } from '@medplum/core';
import type { Hl7MessageEvent } from '@medplum/hl7';
import { afterEach, describe, expect, it } from 'vitest';
import { openGatedConnection } from '../../../../src/emr/hl7v2/mllp/frame-gate.ts';
import { waitFor } from '../../../support/wait.ts';
import { adt, frame } from './support/peers.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A server socket with a gated Hl7Connection; `reads` counts the 'data' events it saw. */
async function gatedPair(maxMessageBytes = 64 * 1024) {
  const received: Hl7Message[] = [];
  const state = { reads: 0, oversize: 0, unreadable: 0 };
  let serverSocket: net.Socket | undefined;
  const server = net.createServer((socket) => {
    serverSocket = socket;
    const connection = openGatedConnection(socket, {
      encoding: 'utf-8',
      maxMessageBytes,
      onOversize: () => {
        state.oversize += 1;
      },
      onUnreadable: () => {
        state.unreadable += 1;
      },
    });
    socket.on('data', () => {
      state.reads += 1;
    });
    connection.addEventListener('message', (event: Hl7MessageEvent) => received.push(event.message));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
  client.setNoDelay(true);
  await new Promise<void>((resolve) => client.once('connect', resolve));
  await waitFor(() => serverSocket);
  cleanup.push(async () => {
    client.destroy();
    serverSocket?.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const write = (bytes: Buffer) => new Promise<void>((resolve, reject) => client.write(bytes, (err) => (err ? reject(err) : resolve())));
  return { client, received, state, write, serverSocket: () => serverSocket! };
}

describe('Hl7Connection behind the gate', () => {
  it('parses a frame delivered one byte per read (each read waited for)', async () => {
    const pair = await gatedPair();
    const bytes = frame(adt('LOCKSTEP', { name: 'Müller^Zoë' }));
    for (const [i, byte] of bytes.entries()) {
      await pair.write(Buffer.from([byte]));
      await waitFor(() => pair.state.reads === i + 1, 2_000, 1);
      if (i < bytes.length - 1) expect(pair.received).toHaveLength(0);
    }
    expect(pair.state.reads).toBe(bytes.length);
    expect(pair.received.map((m) => m.getSegment('PID')!.getField(5)!.toString())).toEqual(['Müller^Zoë']);
  });

  it('parses ten frames that arrive in one read, in order', async () => {
    const pair = await gatedPair();
    const ids = Array.from({ length: 10 }, (_, i) => `ONE-READ-${i}`);
    await pair.write(Buffer.concat(ids.map((id) => frame(adt(id)))));
    await waitFor(() => pair.received.length === 10);
    expect(pair.state.reads).toBe(1);
    expect(pair.received.map((m) => m.getSegment('MSH')!.getField(10)!.toString())).toEqual(ids);
  });

  it('destroys the socket on an oversize frame and never hands it to the framer', async () => {
    const pair = await gatedPair(100);
    await pair.write(frame(adt('TOO-BIG', { name: 'x'.repeat(200) })));
    await waitFor(() => pair.serverSocket().destroyed);
    expect(pair.state.oversize).toBe(1);
    expect(pair.received).toEqual([]);
  });

  it('destroys the socket when the framer cannot parse a frame, but not for an ACK nobody waits for', async () => {
    const pair = await gatedPair();
    await pair.write(frame('MSH|^~\\&|EMR|H|A|S|20260115||ACK|X|P|2.5.1\rMSA|AA|NOBODY-WAITS'));
    await waitFor(() => pair.received.length === 1);
    expect(pair.serverSocket().destroyed).toBe(false);
    await pair.write(frame('garbage'));
    await waitFor(() => pair.serverSocket().destroyed);
    expect(pair.state.unreadable).toBe(1);
  });
});
