// What a FHIR request needs in scope terms: the resource type and SMART letter (c r u d s) of each
// interaction it performs, including every entry of a batch or transaction.

import type { Letter } from './scopes.ts';

export interface Access {
  /** A resource type, or `*` for whole-system interactions. */
  type: string;
  letter: Letter;
}

const RESOURCE_TYPE = /^[A-Z][A-Za-z]*$/;

function letterFor(method: string, segments: readonly string[]): Letter {
  const [, second] = segments;
  const typeLevel = segments.length === 1;
  switch (method) {
    case 'GET':
    case 'HEAD':
      // type/id and type/id/_history/… are reads; type?… and type/_history are searches.
      return typeLevel || second === '_history' || second?.startsWith('$') ? 's' : 'r';
    case 'POST':
      if (typeLevel) return 'c';
      return second === '_search' || second?.startsWith('$') ? 's' : 'u';
    case 'PUT':
    case 'PATCH':
      return 'u';
    case 'DELETE':
      return 'd';
    default:
      return 'u';
  }
}

function splitPath(url: string): string[] {
  const path = url.split('?')[0] ?? '';
  return path.split('/').filter(Boolean).map(decodeSegment);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

interface BundleLike {
  resourceType?: unknown;
  entry?: { request?: { method?: unknown; url?: unknown } }[];
}

function bundleAccess(body: unknown): Access[] {
  const bundle = (body ?? {}) as BundleLike;
  if (bundle.resourceType !== 'Bundle' || !Array.isArray(bundle.entry)) return [{ type: '*', letter: 'u' }];
  return bundle.entry.flatMap((entry) => {
    const method = typeof entry.request?.method === 'string' ? entry.request.method.toUpperCase() : 'POST';
    const url = typeof entry.request?.url === 'string' ? entry.request.url : '';
    return requiredAccess(method, url, undefined);
  });
}

/** Every (type, letter) the request needs. An empty path is a whole-system call; POST there is a batch. */
export function requiredAccess(method: string, url: string, body: unknown): Access[] {
  const segments = splitPath(url);
  const [type] = segments;
  if (type === undefined) return method === 'POST' ? bundleAccess(body) : [{ type: '*', letter: 's' }];
  const resourceType = RESOURCE_TYPE.test(type) ? type : '*';
  return [{ type: resourceType, letter: letterFor(method, segments) }];
}
