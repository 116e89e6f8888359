// The turn a long run of background work gives the rest of the process: resolves once the I/O callbacks that
// are ready now have run (setImmediate, not a microtask, which would starve them), so webhooks, answers from
// the service and wake-ups from other replicas are heard between two steps of a pass or two passes.

export function yieldToIo(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
