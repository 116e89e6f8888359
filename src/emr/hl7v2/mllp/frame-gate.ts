// Sits between a socket and @medplum/hl7's Hl7Connection: counts the bytes since the last complete frame
// (closing the connection when a frame outgrows the limit) and hands the framer whole frames only.
//
// Why not let Hl7Connection read the socket itself: on every read it concatenates everything kept since
// the last frame and scans it again from the start, so a frame arriving in n reads costs O(n^2) — 16 MiB
// takes ~13 s of CPU. Holding the partial frame here (each byte scanned once) keeps it linear, and its
// own parsing (several frames per delivery, bytes before a VT skipped) still does the rest.
import type { Socket } from 'node:net';
import { Hl7Connection, type Hl7ErrorEvent } from '@medplum/hl7';

const FS = 0x1c;
const CR = 0x0d;
/** VT before, FS CR after the message. */
const FRAMING_BYTES = 3;

export type GateResult = { kind: 'hold' } | { kind: 'deliver'; bytes: Buffer } | { kind: 'oversize'; bytes: number };

export interface FrameGate {
  /** What to do with the bytes received so far: keep waiting, hand them on (up to the last FS CR), or give up. */
  push(chunk: Buffer): GateResult;
}

/**
 * Every byte since the end of the last frame counts (junk before a VT too): more than maxMessageBytes + 3
 * without an FS CR cannot become an acceptable frame.
 */
export function createFrameGate(maxMessageBytes: number): FrameGate {
  const maxRun = maxMessageBytes + FRAMING_BYTES;
  let held: Buffer[] = [];
  let run = 0;
  let lastWasFs = false;
  return {
    push(chunk) {
      let lastEnd = -1;
      let pos = 0;
      const frameEnds = (end: number): boolean => {
        run += end + 1 - pos;
        if (run > maxRun) return false;
        run = 0;
        lastEnd = end;
        pos = end + 1;
        return true;
      };
      if (lastWasFs && chunk[0] === CR && !frameEnds(0)) return { kind: 'oversize', bytes: run };
      while (pos < chunk.length) {
        const fs = chunk.indexOf(FS, pos);
        if (fs === -1 || fs === chunk.length - 1) {
          run += chunk.length - pos;
          break;
        }
        if (chunk[fs + 1] === CR) {
          if (!frameEnds(fs + 1)) return { kind: 'oversize', bytes: run };
        } else {
          run += fs + 1 - pos;
          pos = fs + 1;
        }
      }
      lastWasFs = chunk[chunk.length - 1] === FS;
      if (run > maxRun) return { kind: 'oversize', bytes: run };
      if (lastEnd === -1) {
        held.push(chunk);
        return { kind: 'hold' };
      }
      const bytes = held.length === 0 ? chunk.subarray(0, lastEnd + 1) : Buffer.concat([...held, chunk.subarray(0, lastEnd + 1)]);
      held = lastEnd + 1 < chunk.length ? [chunk.subarray(lastEnd + 1)] : [];
      return { kind: 'deliver', bytes };
    },
  };
}

/**
 * The framer's own complaint about an ACK it cannot match (MSA-2 names no message waiting) is an
 * OperationOutcomeError; compared by shape because @medplum/hl7 loads @medplum/core's CommonJS build and
 * we its ESM build, so `instanceof` would never match.
 */
const isUnmatchedAck = (err: unknown): boolean => typeof err === 'object' && err !== null && 'outcome' in err;

export interface GateOptions {
  /** iconv-lite name the framer decodes frames with. */
  encoding: string;
  maxMessageBytes: number;
  /** The socket has been destroyed: a frame grew past the limit. */
  onOversize(bytes: number): void;
  /**
   * The socket has been destroyed: a frame could not be parsed as HL7. The framer drops everything else
   * that came in the same delivery, so what the peer is waiting for may be lost; closing tells it at once.
   */
  onUnreadable(): void;
}

/** An Hl7Connection on `socket` that only ever sees whole frames. */
export function openGatedConnection(socket: Socket, opts: GateOptions): Hl7Connection {
  const before = new Set(socket.listeners('data'));
  const connection = new Hl7Connection(socket, opts.encoding);
  const added = socket.listeners('data').filter((l) => !before.has(l));
  // Hl7Connection 5.0.10 reads the socket with exactly one 'data' listener; a version that does otherwise
  // must not silently bypass the size limit.
  if (added.length !== 1) throw new Error(`@medplum/hl7 Hl7Connection added ${added.length} socket 'data' listeners; expected 1`);
  const framerInput = added[0] as (chunk: Buffer) => void;
  socket.removeListener('data', framerInput);

  const gate = createFrameGate(opts.maxMessageBytes);
  let parsing = false;
  let dropped = false;
  const drop = (then: () => void) => {
    if (dropped) return;
    dropped = true;
    socket.destroy();
    then();
  };
  // The framer reports a frame it cannot parse as an 'error' event from inside framerInput (below).
  connection.addEventListener('error', (event: Hl7ErrorEvent) => {
    if (parsing && !isUnmatchedAck(event.error)) drop(opts.onUnreadable);
  });
  socket.on('data', (chunk: Buffer) => {
    if (dropped) return;
    const result = gate.push(chunk);
    if (result.kind === 'oversize') drop(() => opts.onOversize(result.bytes));
    else if (result.kind === 'deliver') {
      parsing = true;
      try {
        framerInput(result.bytes);
      } finally {
        parsing = false;
      }
    }
  });
  return connection;
}
