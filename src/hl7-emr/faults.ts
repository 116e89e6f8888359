// The faults a test or a QA session switches on (setFault, POST /_emr/faults): refuse messages AE (with an
// ERR) or AR without applying them, or apply them and acknowledge late or never. With `count` only the next
// that many messages; without, until switched off. In memory: a restart clears them.
import { z } from 'zod';
import type { FaultMode, FaultSetting } from './model.ts';

export const faultSchema = z.strictObject({
  mode: z.enum(['AE', 'AR', 'late', 'silent']).nullable(),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  count: z.number().int().min(1).max(100_000).optional(),
});

export interface ActiveFault {
  mode: FaultMode;
  delayMs: number;
  /** Messages it still applies to; undefined: until switched off. */
  remaining?: number;
}

export interface FaultSwitch {
  set(f: FaultSetting): void;
  /** The fault as it stands (null when off). */
  current(): ActiveFault | null;
  /** The fault for the message now arriving (counting it against `count`), or null. */
  take(): ActiveFault | null;
}

const DEFAULT_LATE_MS = 5_000;

export function createFaultSwitch(): FaultSwitch {
  let fault: ActiveFault | null = null;
  return {
    set(f) {
      const parsed = faultSchema.parse(f);
      fault = parsed.mode
        ? { mode: parsed.mode, delayMs: parsed.delayMs ?? DEFAULT_LATE_MS, ...(parsed.count !== undefined ? { remaining: parsed.count } : {}) }
        : null;
    },
    current: () => (fault ? { ...fault } : null),
    take() {
      const f = fault;
      if (!f) return null;
      if (f.remaining !== undefined) fault = f.remaining > 1 ? { ...f, remaining: f.remaining - 1 } : null;
      return { ...f };
    },
  };
}
