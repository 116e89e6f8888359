// Faults a QA session or a test switches on through POST /_sim/faults. Held in memory: a restart clears
// them, which is what a tester expects of a switch.
import { z } from 'zod';

// Strict at every level: a misspelt fault answers 400 naming it rather than looking switched on.
export const faultsSchema = z.strictObject({
  /** Every event is queued twice for each subscriber (the interface's at-least-once). */
  duplicateDeliveries: z.boolean().optional(),
  /** New deliveries are spread over a random delay, so different appointments overtake each other. */
  outOfOrder: z.boolean().optional(),
  messaging: z
    .strictObject({
      /** Delivery to the patient fails with this reason (FAILED, document.failed). */
      failReason: z.string().min(1).optional(),
      /** Delivery to the patient takes this long (ms of real time). */
      slowMs: z.number().int().min(0).max(60_000).optional(),
    })
    .optional(),
  integration: z
    .strictObject({
      /** The next `count` integration API requests answer this status (500, 502, 503 or 429). */
      status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(429)]).optional(),
      count: z.number().int().min(1).max(10_000).default(1),
      retryAfterSeconds: z.number().int().min(0).max(3600).default(1),
      /** Do the work, then answer only after this many ms (a slow service that callers time out on). */
      delayMs: z.number().int().min(0).max(60_000).optional(),
    })
    .optional(),
  mappings: z
    .strictObject({
      /**
       * Every mapping posted (PUT /integration/v1/mappings/...) is refused with this status until the fault is lifted:
       * 404, the service does not know the record; 409, it maps the record to another externalId. Nothing is stored.
       */
      refuse: z.union([z.literal(404), z.literal(409)]),
    })
    .optional(),
  /** Requests per key per minute on the integration API; past it, 429 with Retry-After. */
  rateLimitPerMinute: z.number().int().min(1).optional(),
});

export type Faults = z.infer<typeof faultsSchema>;
