// Several MLLP links to the EMR's listener (HL7_SEND_CONNECTIONS, docs/connecting-an-hl7-emr.md): N of
// ./client.ts's clients, each exactly the link it is alone (one message in flight, its own reconnect and backoff,
// TLS as configured). A message goes to a free link, or waits first in first out until one is free. MLLP allows
// one message in flight per connection, so one link carries at most 1 / round trip messages a second (20 at
// 50 ms); N links carry N times that. The pool never resends either: a message that failed is the caller's to
// send again, with the same MSH-10 (outbound.ts derives it from what the message is for), on whichever link.
//
// Order per entity. The EMR applies what arrives on different connections in any order, so two messages of one
// entity must never be in flight at once. The processor applies one entity's events one at a time (the queue
// hands out each entity's oldest open event only; a patient's snapshot, whichever event carries it, is applied
// under that patient's lock), and each port call resolves only once its message was acknowledged (send.ts):
// an appointment's S13 is never sent while its S12 awaits its ACK, and a patient's A28 is acknowledged before
// the S12 naming that patient is sent. One caller does not go through those sections: the write-back of a
// document's outcome links a patient (linkPatient, an A31) while an event of that patient may be sending its
// own. So every message carries its entity's key (`patient:<id>`, `appointment:<id>`), and the pool sends one
// message per key at a time, in call order, as one link would: a message whose key is in flight waits, and
// those behind it with other keys go past it.
import type { Hl7Message } from '@medplum/core';
import { createMllpClient, type MllpClient, type MllpClientOptions } from './client.ts';
import { parseMllpUrl } from './endpoint.ts';
import { MllpError } from './errors.ts';

export interface LinkPoolOptions extends MllpClientOptions {
  /** How many links to open (1 to 32); each connects at its first message. */
  connections: number;
}

/** The links as /admin/status reports them. */
export interface LinkCounts {
  configured: number;
  /** Links whose connection is open now (a link connects at its first message, and again after a drop). */
  connected: number;
}

export interface MllpLinkPool {
  /**
   * Resolves with the peer's acknowledgment, as MllpClient.send; rejects with MllpError. Messages with the same
   * `key` (the entity they are about) go one at a time, in call order.
   */
  send(message: Hl7Message, key?: string): Promise<Hl7Message>;
  links(): LinkCounts;
  /** Rejects what waits and what is in flight (closed), and closes every link. */
  close(): Promise<void>;
}

interface Link {
  client: MllpClient;
  busy: boolean;
}

interface Waiting {
  message: Hl7Message;
  key: string | undefined;
  resolve(ack: Hl7Message): void;
  reject(err: unknown): void;
}

export const MAX_LINKS = 32;

export function createLinkPool(opts: LinkPoolOptions): MllpLinkPool {
  const { connections, ...clientOptions } = opts;
  if (!Number.isInteger(connections) || connections < 1 || connections > MAX_LINKS) throw new RangeError(`connections must be 1 to ${MAX_LINKS}`);
  const { label } = parseMllpUrl(opts.url);
  const links: Link[] = Array.from({ length: connections }, () => ({ client: createMllpClient(clientOptions), busy: false }));
  const waiting: Waiting[] = [];
  const keysInFlight = new Set<string>();
  let closed = false;

  /**
   * A free link, connected ones first, then one that may connect now. When every free link is backing off after
   * a failed connect, the message waits for a busy one; with none busy it goes to a backing-off link, which
   * fails it fast (unreachable), as one link alone would.
   */
  function pickLink(): Link | undefined {
    const free = links.filter((l) => !l.busy);
    return free.find((l) => l.client.isConnected()) ?? free.find((l) => l.client.retryInMs() === 0) ?? (links.some((l) => l.busy) ? undefined : free[0]);
  }

  function dispatch(): void {
    for (let i = 0; i < waiting.length && !closed; ) {
      const next = waiting[i]!;
      if (next.key !== undefined && keysInFlight.has(next.key)) {
        i++;
        continue;
      }
      const link = pickLink();
      if (!link) return;
      waiting.splice(i, 1);
      carry(link, next);
    }
  }

  function carry(link: Link, w: Waiting): void {
    link.busy = true;
    if (w.key !== undefined) keysInFlight.add(w.key);
    const release = () => {
      link.busy = false;
      if (w.key !== undefined) keysInFlight.delete(w.key);
    };
    link.client.send(w.message).then(
      (ack) => {
        release();
        w.resolve(ack);
        dispatch();
      },
      (err: unknown) => {
        release();
        // A link that could not connect wrote nothing of the message: while another link is connected, the
        // message goes back to the head of the queue rather than failing as if the EMR were unreachable.
        if (!closed && err instanceof MllpError && err.kind === 'unreachable' && links.some((l) => l !== link && l.client.isConnected())) waiting.unshift(w);
        else w.reject(err);
        dispatch();
      },
    );
  }

  return {
    send(message, key) {
      if (closed) return Promise.reject(new MllpError('closed', label, 'client closed'));
      return new Promise<Hl7Message>((resolve, reject) => {
        waiting.push({ message, key, resolve, reject });
        dispatch();
      });
    },
    links: () => ({ configured: links.length, connected: links.filter((l) => l.client.isConnected()).length }),
    async close() {
      closed = true;
      for (const w of waiting.splice(0)) w.reject(new MllpError('closed', label, 'client closed'));
      await Promise.all(links.map((l) => l.client.close()));
    },
  };
}
