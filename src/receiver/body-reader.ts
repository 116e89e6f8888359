// Reading a request body by hand, for what raw-body's all-or-nothing read cannot do: go on with bytes already read
// (a body without Content-Length found over the limit continues into the quarantine's read, ./quarantine-intake.ts),
// hand each piece to a verifier as it arrives, keep the pieces only while they fit a bound, and stop reading at a
// hard cap (the request is then left unread: the answer closes the connection, ./quarantine-intake.ts).
import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.ts';

export interface ReadOptions {
  /** Pieces already read from the request, in order: fed to onChunk and counted first. */
  prefix?: readonly Buffer[];
  /** Pieces are kept while the total is at most this; past it they are dropped (kept: undefined). */
  keepBytes: number;
  /** Reading stops once the total passes this: overCap, the rest left unread. */
  capBytes: number;
  onChunk?: (chunk: Buffer) => void;
}

export interface ReadResult {
  /** Every piece read (the prefix's too), or undefined once the total passed keepBytes. */
  kept: Buffer[] | undefined;
  /** Bytes read. */
  total: number;
  /** The total passed capBytes: reading stopped there. */
  overCap: boolean;
  /** With overCap: the piece that passed the cap (read, neither fed to onChunk nor kept). */
  last?: Buffer;
}

class BodyUnreadableError extends AppError {
  constructor(cause: unknown) {
    super({ code: 'bad_request', status: 400, message: 'the request body ended before it was complete', cause });
  }
}

export function readBodyPieces(req: IncomingMessage, opts: ReadOptions): Promise<ReadResult> {
  let kept: Buffer[] | undefined = [];
  let total = 0;
  const take = (chunk: Buffer): boolean => {
    total += chunk.length;
    if (total > opts.capBytes) return false;
    opts.onChunk?.(chunk);
    if (kept && total <= opts.keepBytes) kept.push(chunk);
    else kept = undefined;
    return true;
  };
  for (const chunk of opts.prefix ?? []) {
    if (!take(chunk)) return Promise.resolve({ kept, total, overCap: true, last: chunk });
  }
  if (req.readableEnded) return Promise.resolve({ kept, total, overCap: false });
  return new Promise((resolve, reject) => {
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      if (take(chunk)) return;
      done();
      req.pause();
      resolve({ kept, total, overCap: true, last: chunk });
    };
    const onEnd = () => {
      done();
      resolve({ kept, total, overCap: false });
    };
    const onError = (err: Error) => {
      done();
      reject(new BodyUnreadableError(err));
    };
    const onClose = () => {
      if (req.complete) return;
      done();
      reject(new BodyUnreadableError(new Error('request closed')));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    // A read that stopped at its cap paused the request: this one goes on from there.
    if (req.isPaused()) req.resume();
  });
}
