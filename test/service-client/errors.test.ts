// How answers of the service are classified: what a retry can fix, what it cannot, and Retry-After.
import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../src/service-client/errors.ts';
import { parseRetryAfter } from '../../src/work/retry-after.ts';

describe('classifyStatus', () => {
  it.each([
    [500, true],
    [503, true],
    [429, true],
    [408, true],
    [400, false],
    [401, false],
    [409, false],
    [413, false],
    [415, false],
    [422, false],
  ])('%i is retryable: %s', (status, retryable) => {
    expect(classifyStatus(status, undefined, undefined).retryable).toBe(retryable);
  });

  it("keeps the service's error code, message and field", () => {
    const e = classifyStatus(422, { error: { code: 'patient_unresolvable', message: 'who?', field: 'patientPhone' } }, undefined);
    expect(e).toMatchObject({ code: 'patient_unresolvable', message: 'who?', field: 'patientPhone', httpStatus: 422 });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-15T10:00:00.000Z');
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Thu, 15 Jan 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
