// Polling for an eventual outcome in end-to-end tests: a bounded wait, never a fixed sleep.
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
