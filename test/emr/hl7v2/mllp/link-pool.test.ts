// Several MLLP links to a stand-in EMR listener on loopback: with 4 links, 4 messages sent together are in flight
// at once; with 1 (the default) one at a time, as one client; one entity's messages one at a time in call order
// while others pass them; a dropped link connects again for the message sent again while the other links go on;
// a link that cannot connect leaves its message to a connected one; close() closes every link.
import { Hl7Message } from '@medplum/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../../src/clock.ts';
import { createLinkPool, type LinkPoolOptions, type MllpLinkPool } from '../../../../src/emr/hl7v2/mllp/link-pool.ts';
import { waitFor } from '../../../support/wait.ts';
import { ack, adt, controlIdOf, type FrameHandler, type ReceivingPeer, reply, sleep, startReceivingPeer } from './support/peers.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function peer(onFrame: FrameHandler): Promise<ReceivingPeer> {
  const started = await startReceivingPeer(onFrame);
  cleanup.push(() => started.close());
  return started;
}

function pool(port: number, connections: number, overrides: Partial<LinkPoolOptions> = {}): MllpLinkPool {
  const created = createLinkPool({ url: `mllp://127.0.0.1:${port}`, ackTimeoutMs: 2_000, clock: createManualClock(), connections, ...overrides });
  cleanup.push(() => created.close());
  return created;
}

const message = (id: string) => Hl7Message.parse(adt(id));
const ackedId = (m: Hl7Message) => m.getSegment('MSA')!.getField(2)!.toString();
const idsOf = (emr: ReceivingPeer) => emr.frames.map((f) => controlIdOf(f.text));

/** A listener that answers nothing until it holds `n` messages, then answers them all. */
function answerOnceHolding(n: number): { onFrame: FrameHandler; answeredAt: () => number | undefined } {
  const held: Parameters<FrameHandler>[0][] = [];
  let answeredAt: number | undefined;
  return {
    onFrame: (frame) => {
      held.push(frame);
      if (held.length < n) return;
      answeredAt = performance.now();
      for (const f of held.splice(0)) reply(f.socket, ack(controlIdOf(f.text)));
    },
    answeredAt: () => answeredAt,
  };
}

describe('messages in flight at once', () => {
  it('with 4 links, has 4 messages sent together in flight at once: the listener holds all 4 before it answers any', async () => {
    const holding = answerOnceHolding(4);
    const emr = await peer(holding.onFrame);
    const links = pool(emr.port, 4);
    const acks = await Promise.all(['M1', 'M2', 'M3', 'M4'].map((id, i) => links.send(message(id), `patient:p${i}`)));
    expect(acks.map(ackedId)).toEqual(['M1', 'M2', 'M3', 'M4']);
    expect(emr.frames.every((f) => f.at <= holding.answeredAt()!)).toBe(true);
    expect(new Set(emr.frames.map((f) => f.connection)).size).toBe(4);
    expect(links.links()).toEqual({ configured: 4, connected: 4 });
  });

  it('with 1 link, sends messages issued together one at a time, each only after the previous ACK, on one connection', async () => {
    const ackedAt: number[] = [];
    const emr = await peer(({ text, socket }) =>
      setTimeout(() => {
        ackedAt.push(performance.now());
        reply(socket, ack(controlIdOf(text)));
      }, 30),
    );
    const links = pool(emr.port, 1);
    const acks = await Promise.all(['F1', 'F2', 'F3'].map((id, i) => links.send(message(id), `patient:p${i}`)));
    expect(acks.map(ackedId)).toEqual(['F1', 'F2', 'F3']);
    expect(idsOf(emr)).toEqual(['F1', 'F2', 'F3']);
    expect(emr.frames[1]!.at).toBeGreaterThanOrEqual(ackedAt[0]!);
    expect(emr.frames[2]!.at).toBeGreaterThanOrEqual(ackedAt[1]!);
    expect(emr.connections).toHaveLength(1);
    expect(links.links()).toEqual({ configured: 1, connected: 1 });
  });

  it('with more messages than links, queues the rest first in first out until a link is free', async () => {
    const emr = await peer(({ text, socket }) => setTimeout(() => reply(socket, ack(controlIdOf(text))), 20));
    const links = pool(emr.port, 2);
    const ids = ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6'];
    const acks = await Promise.all(ids.map((id, i) => links.send(message(id), `patient:p${i}`)));
    expect(acks.map(ackedId)).toEqual(ids);
    expect(idsOf(emr)).toEqual(ids);
    expect(emr.connections).toHaveLength(2);
  });
});

describe('order per entity', () => {
  it("sends one entity's messages one at a time in call order, while another entity's message goes past them", async () => {
    const pending: Parameters<FrameHandler>[0][] = [];
    const emr = await peer((frame) => pending.push(frame));
    const links = pool(emr.port, 4);
    const sent = [links.send(message('A-FIRST'), 'patient:a'), links.send(message('A-SECOND'), 'patient:a'), links.send(message('B'), 'patient:b')];
    await waitFor(() => pending.length === 2);
    await sleep(50);
    // A-SECOND waits for A-FIRST's ACK although two links are free; B did not wait behind it.
    expect(pending.map((f) => controlIdOf(f.text))).toEqual(['A-FIRST', 'B']);
    const first = pending.shift()!;
    reply(first.socket, ack('A-FIRST'));
    await waitFor(() => pending.length === 2);
    expect(idsOf(emr)).toEqual(['A-FIRST', 'B', 'A-SECOND']);
    for (const f of pending.splice(0)) reply(f.socket, ack(controlIdOf(f.text)));
    expect((await Promise.all(sent)).map(ackedId)).toEqual(['A-FIRST', 'A-SECOND', 'B']);
  });

  it("sends an entity's next message after its previous one failed, not before", async () => {
    const emr = await peer(({ text, socket }) => {
      if (controlIdOf(text) === 'SILENT') return;
      reply(socket, ack(controlIdOf(text)));
    });
    const links = pool(emr.port, 4, { ackTimeoutMs: 150 });
    const [first, second] = await Promise.allSettled([links.send(message('SILENT'), 'appointment:x'), links.send(message('NEXT'), 'appointment:x')]);
    expect(first).toMatchObject({ status: 'rejected', reason: { kind: 'timeout' } });
    expect(second).toMatchObject({ status: 'fulfilled' });
    expect(emr.frames[1]!.at - emr.frames[0]!.at).toBeGreaterThanOrEqual(140);
  });
});

describe('a link that drops or cannot connect', () => {
  it('connects the dropped link again for the message sent again, with the same MSH-10, while the other links go on', async () => {
    let dropped = false;
    const emr = await peer(({ text, socket }) => {
      const id = controlIdOf(text);
      if (id === 'DROP' && !dropped) {
        dropped = true;
        socket.destroy();
        return;
      }
      reply(socket, ack(id));
    });
    const links = pool(emr.port, 4);
    const drop = message('DROP');
    const outcomes = await Promise.allSettled([drop, message('K1'), message('K2'), message('K3')].map((m, i) => links.send(m, `patient:p${i}`)));
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: { kind: 'closed' } });
    expect(outcomes.slice(1).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const droppedOn = emr.frames.find((f) => controlIdOf(f.text) === 'DROP')!.connection;
    await waitFor(() => emr.connections[droppedOn - 1]!.closedAt);
    await waitFor(() => links.links().connected === 3);

    // The caller sends it again (the port builds it with the same MSH-10), here with three more: the three
    // links still open take three of them, the dropped one connects again for the fourth.
    const again = await Promise.all([drop, message('K4'), message('K5'), message('K6')].map((m, i) => links.send(m, `patient:p${i}`)));
    expect(again.map(ackedId)).toEqual(['DROP', 'K4', 'K5', 'K6']);
    const carried = emr.frames.filter((f) => controlIdOf(f.text) === 'DROP');
    expect(carried).toHaveLength(2);
    expect(carried[1]!.text).toBe(carried[0]!.text);
    expect(emr.connections).toHaveLength(5);
    expect(links.links()).toEqual({ configured: 4, connected: 4 });
    // The other links never dropped: they went on carrying messages.
    expect(emr.connections.filter((c) => c.closedAt !== undefined)).toHaveLength(1);
  });

  it('gives the message of a link that cannot connect to a connected link instead of failing it', async () => {
    const emr = await peer(({ text, socket }) => setTimeout(() => reply(socket, ack(controlIdOf(text))), 30));
    const links = pool(emr.port, 2);
    await links.send(message('UP'), 'patient:a');
    // The listener stops taking connections; the one open stays.
    emr.stopAccepting();
    const acks = await Promise.all([links.send(message('ON-OPEN'), 'patient:b'), links.send(message('REFUSED'), 'patient:c')]);
    expect(acks.map(ackedId)).toEqual(['ON-OPEN', 'REFUSED']);
    expect(emr.frames.map((f) => [controlIdOf(f.text), f.connection])).toEqual([
      ['UP', 1],
      ['ON-OPEN', 1],
      ['REFUSED', 1],
    ]);
    expect(links.links()).toEqual({ configured: 2, connected: 1 });
  });

  it('fails a message as unreachable when no link can connect', async () => {
    const emr = await peer(() => undefined);
    emr.stopAccepting();
    const links = pool(emr.port, 3);
    await expect(links.send(message('NOWHERE'), 'patient:a')).rejects.toMatchObject({ kind: 'unreachable' });
  });
});

describe('close()', () => {
  it('closes every link, rejects what is in flight and what waits with closed, and every later send', async () => {
    const emr = await peer(() => undefined);
    const links = pool(emr.port, 3, { ackTimeoutMs: 5_000 });
    const sent = ['C1', 'C2', 'C3', 'C4'].map((id, i) => links.send(message(id), `patient:p${i}`));
    await waitFor(() => emr.frames.length === 3);
    expect(links.links().connected).toBe(3);
    const settled = Promise.allSettled(sent);
    await links.close();
    const kinds = (await settled).map((o) => (o.status === 'rejected' ? (o.reason as { kind: string }).kind : o.status));
    expect(kinds).toEqual(['closed', 'closed', 'closed', 'closed']);
    await expect(links.send(message('C5'), 'patient:p5')).rejects.toMatchObject({ kind: 'closed' });
    await waitFor(() => emr.connections.every((c) => c.closedAt !== undefined));
    expect(emr.connections).toHaveLength(3);
    expect(links.links()).toEqual({ configured: 3, connected: 0 });
  });
});
