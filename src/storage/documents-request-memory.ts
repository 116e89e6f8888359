// The requests of documents enqueued by this process and not sent yet, held parsed in memory (oldest first,
// at most `maxChars` of JSON in all), so that a send neither reads its request back nor parses it again.
// Sound with any number of processes: a row's request text never changes while the row may be sent (a
// requeue gives a new request only to a REJECTED row, whose request was never held), so the object held is
// the row's request whoever claims it; a request another process sent is dropped with the oldest.
import type { DocumentRequest } from '../contract/documents.ts';

export interface RequestMemory {
  /** Holds a request just enqueued (`chars`: its JSON's length); nothing when larger than the whole memory. */
  keep(externalId: string, request: DocumentRequest, chars: number): void;
  /** The request held for an externalId, given up once taken (a send takes it once). */
  take(externalId: string): DocumentRequest | undefined;
}

export function createRequestMemory(maxChars: number): RequestMemory {
  const held = new Map<string, { request: DocumentRequest; chars: number }>();
  let chars = 0;
  const drop = (externalId: string) => {
    const e = held.get(externalId);
    if (!e) return undefined;
    held.delete(externalId);
    chars -= e.chars;
    return e.request;
  };
  return {
    keep(externalId, request, size) {
      if (size > maxChars) return;
      drop(externalId);
      held.set(externalId, { request, chars: size });
      chars += size;
      for (const oldest of held.keys()) {
        if (chars <= maxChars) break;
        drop(oldest);
      }
    },
    take: drop,
  };
}
