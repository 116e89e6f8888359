// Running the `emr-bridge` command as a child process, the way a person at a terminal would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from '../../bench/support/child.ts';

const run = promisify(execFile);

/** Exit code and everything the command printed (standard output, then standard error). */
export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/emr-bridge.js', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}
