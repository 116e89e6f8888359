// For the SQLite crash tests: runs a script of ./ that writes until killed and prints each write's number once it
// returned (or its promise resolved), kills it (SIGKILL) once it has printed `atLeast`, and answers the last
// number it printed: every write up to it must be found on disk afterwards.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../../src/paths.ts';
import { waitFor } from '../../support/wait.ts';

export async function killedMidStream(script: string, dbPath: string, atLeast: number): Promise<number> {
  const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin/run-ts.js'), join(PACKAGE_ROOT, 'test/sqlite/support', script), dbPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const printed = () => Number(/(\d+)\n$/.exec(out)?.[1] ?? 0);
  await waitFor(() => printed() >= atLeast, 20_000, 5);
  child.kill('SIGKILL');
  await exited;
  return printed();
}
