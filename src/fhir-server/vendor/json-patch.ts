// RFC 6902 JSON Patch over a record, for the vendor profile's changes: a PATCH is applied here first so that its
// result can be checked against the profile's rules (an Appointment's Slot and status) before anything is stored,
// and then written as one new version. A patch that is not one, or does not apply, throws PatchError saying why.

export class PatchError extends Error {}

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

type Container = Record<string, unknown> | unknown[];

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);
const INDEX = /^(0|[1-9]\d*)$/;

/** The body as a list of operations, or PatchError naming the first that is not one. */
export function parsePatch(body: unknown): PatchOperation[] {
  if (!Array.isArray(body) || body.length === 0) throw new PatchError('a JSON Patch is a non-empty array of operations (application/json-patch+json)');
  body.forEach((o: Partial<PatchOperation> | null, i) => {
    if (!o || typeof o !== 'object' || !OPS.has(String(o.op)) || typeof o.path !== 'string')
      throw new PatchError(`operation ${i}: needs an op (${[...OPS].join(', ')}) and a path`);
    if ((o.op === 'move' || o.op === 'copy') && typeof o.from !== 'string') throw new PatchError(`operation ${i}: ${o.op} needs from`);
    if ((o.op === 'add' || o.op === 'replace' || o.op === 'test') && !('value' in o)) throw new PatchError(`operation ${i}: ${o.op} needs a value`);
  });
  return body as PatchOperation[];
}

function tokens(pointer: string): string[] {
  if (pointer === '' || !pointer.startsWith('/')) throw new PatchError('a path names a part of the record, starting with /');
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function child(node: unknown, key: string): unknown {
  if (Array.isArray(node) && INDEX.test(key) && Number(key) < node.length) return node[Number(key)];
  if (node && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, key)) return (node as Record<string, unknown>)[key];
  throw new PatchError('there is nothing there');
}

/** The container holding what the pointer names, and its last key. */
function locate(doc: unknown, pointer: string): [Container, string] {
  const keys = tokens(pointer);
  const last = keys.pop()!;
  let node = doc;
  for (const key of keys) node = child(node, key);
  if (!node || typeof node !== 'object') throw new PatchError('its parent is not an object or an array');
  return [node as Container, last];
}

const get = (doc: unknown, pointer: string): unknown => {
  const [parent, key] = locate(doc, pointer);
  return child(parent, key);
};

function add(doc: unknown, pointer: string, value: unknown): void {
  const [parent, key] = locate(doc, pointer);
  if (!Array.isArray(parent)) parent[key] = value;
  else if (key === '-') parent.push(value);
  else if (INDEX.test(key) && Number(key) <= parent.length) parent.splice(Number(key), 0, value);
  else throw new PatchError('not a place in the array');
}

function remove(doc: unknown, pointer: string): unknown {
  const [parent, key] = locate(doc, pointer);
  const removed = child(parent, key);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return removed;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const [ka, kb] = [Object.keys(a), Object.keys(b)];
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** A copy of the record with every operation applied in order; the record itself is left as it was. */
export function applyPatch<T>(record: T, operations: PatchOperation[]): T {
  const doc = structuredClone(record);
  operations.forEach((o, i) => {
    try {
      if (o.op === 'add') add(doc, o.path, structuredClone(o.value));
      else if (o.op === 'remove') remove(doc, o.path);
      else if (o.op === 'replace') {
        remove(doc, o.path);
        add(doc, o.path, structuredClone(o.value));
      } else if (o.op === 'move') {
        if (o.path.startsWith(`${o.from}/`)) throw new PatchError('cannot move a value into itself');
        add(doc, o.path, remove(doc, o.from!));
      } else if (o.op === 'copy') add(doc, o.path, structuredClone(get(doc, o.from!)));
      else if (!equal(get(doc, o.path), o.value)) throw new PatchError('is not the value the test names');
    } catch (err) {
      if (err instanceof PatchError) throw new PatchError(`operation ${i} (${o.op} ${o.path}): ${err.message}`);
      throw err;
    }
  });
  return doc;
}
