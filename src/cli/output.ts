// Standard output for the CLI. Scripts find a server by reading the first line, `listening on …`, so
// log lines written while a server starts are held back until that line is out.
import { Writable } from 'node:stream';

export interface GatedStdout {
  /** The destination for the logger. */
  stream: Writable;
  /** Prints the first line, then lets the held log lines (and all later ones) through. */
  announce(firstLine: string): void;
}

export function createGatedStdout(out: NodeJS.WritableStream = process.stdout): GatedStdout {
  let open = false;
  const held: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (open) out.write(chunk, () => cb());
      else {
        held.push(Buffer.from(chunk));
        cb();
      }
    },
  });
  return {
    stream,
    announce(firstLine) {
      out.write(`${firstLine}\n`);
      open = true;
      for (const chunk of held.splice(0)) out.write(chunk);
    },
  };
}

export const print = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
