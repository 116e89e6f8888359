// The assertion ids (`jti`) each client has used, kept until the assertion's own expiry: after that the
// assertion is refused as expired anyway, so the id can be forgotten.
import type { Clock } from '../../clock.ts';

export interface JtiLedger {
  /** Records the id; false when this client already used it. */
  claim(clientId: string, jti: string, expiresAtMs: number): boolean;
}

export function createJtiLedger(clock: Clock): JtiLedger {
  const used = new Map<string, Map<string, number>>();

  function forgetExpired(ids: Map<string, number>, now: number): void {
    for (const [jti, expiresAt] of ids) if (expiresAt < now) ids.delete(jti);
  }

  return {
    claim: (clientId, jti, expiresAtMs) => {
      const ids = used.get(clientId) ?? new Map<string, number>();
      used.set(clientId, ids);
      forgetExpired(ids, clock.now());
      if (ids.has(jti)) return false;
      ids.set(jti, expiresAtMs);
      return true;
    },
  };
}
