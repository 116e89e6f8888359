// Starting TypeScript child processes and waiting for their `listening on <url>` line. Shared by the
// benchmarks and the tests (bench/ never imports from test/; test/ imports this).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Child {
  proc: ChildProcess;
  url: string;
  output: () => string;
  /** SIGTERM (or the given signal) and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startChild(args: string[], opts: { env?: Record<string, string | undefined>; timeoutMs?: number; cwd?: string } = {}): Promise<Child> {
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`child did not start in time:\n${out}\n${err}`));
    }, opts.timeoutMs ?? 20_000);
    const onData = () => {
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', onData);
      resolve({
        proc,
        url: m[1]!,
        output: () => out + err,
        async stop(signal = 'SIGTERM') {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
          return exited;
        },
      });
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before listening:\n${out}\n${err}`));
    });
  });
}
