// A real pino logger (redaction included) whose lines a test can read back as objects.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.ts';

export function captureLogger(level = 'debug'): { logger: Logger; lines(): Record<string, unknown>[] } {
  const chunks: string[] = [];
  const logger = createLogger({
    level,
    destination: new Writable({
      write(chunk, _e, cb) {
        chunks.push(chunk.toString());
        cb();
      },
    }),
  });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
