// Graceful stop on SIGTERM / SIGINT: stop taking work, finish the open transaction, close the database.
// A second signal while stopping exits at once.

export function onShutdown(stop: () => Promise<void>, log: (msg: string) => void): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        process.exit(1);
      }
      stopping = true;
      log(`${signal}: stopping`);
      stop().then(
        () => resolve(0),
        (err: unknown) => {
          log(`stop failed: ${(err as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
  });
}
