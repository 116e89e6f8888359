// Runs CLI code in this process and keeps what it printed on standard output and standard error.
import { vi } from 'vitest';

export async function captureOutput(run: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    return { code: await run(), out, err };
  } finally {
    vi.restoreAllMocks();
  }
}
