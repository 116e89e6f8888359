// What the vendor profile was asked, for tests that prove a client never tried what such an EMR refuses:
// creates of its master data, conditional creates, changes without If-Match, and every refused request by method
// and type. Counted for
// the life of the server (per instance: two servers in one process count apart), read at GET /_control/counters.

export interface CountersSnapshot {
  /** POST Practitioner, whatever the answer (refused, or not signed in). */
  postPractitioner: number;
  postLocation: number;
  /** Requests that carried an If-None-Exist header. */
  ifNoneExist: number;
  /** PATCH requests that carried no If-Match header. */
  withoutIfMatch: number;
  /** Refused requests by `METHOD Type` (`POST /` for a Bundle posted to the base). */
  refused: Record<string, number>;
}

export interface RequestCounters {
  /** Every FHIR request, before sign-in is checked: it was asked even when it is refused for that. */
  asked(method: string, url: string, headers: { ifNoneExist: boolean; ifMatch: boolean }): void;
  refused(method: string, type: string): void;
  snapshot(): CountersSnapshot;
}

export function createRequestCounters(): RequestCounters {
  const counts = { postPractitioner: 0, postLocation: 0, ifNoneExist: 0, withoutIfMatch: 0 };
  const refused = new Map<string, number>();
  return {
    asked(method, url, { ifNoneExist, ifMatch }) {
      const path = (url.split('?')[0] ?? '').split('/').filter(Boolean).join('/');
      if (method === 'POST' && path === 'Practitioner') counts.postPractitioner++;
      if (method === 'POST' && path === 'Location') counts.postLocation++;
      if (ifNoneExist) counts.ifNoneExist++;
      if (method === 'PATCH' && !ifMatch) counts.withoutIfMatch++;
    },
    refused(method, type) {
      const key = `${method} ${type || '/'}`;
      refused.set(key, (refused.get(key) ?? 0) + 1);
    },
    snapshot: () => ({ ...counts, refused: Object.fromEntries(refused) }),
  };
}
