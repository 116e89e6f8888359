// The one reading of `Authorization: Bearer <token>` that the admin API, the simulator and the bundled FHIR
// server share.
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/http/bearer.ts';

describe('bearerToken', () => {
  it('takes the token after the scheme, whatever its case, without surrounding spaces', () => {
    expect(bearerToken('Bearer live_abc')).toBe('live_abc');
    expect(bearerToken('bearer   live_abc  ')).toBe('live_abc');
  });

  it('finds none without the scheme, a token, or a header', () => {
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(bearerToken('live_abc')).toBeUndefined();
  });
});
