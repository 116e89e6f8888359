// The vendor profile's rules, modelled on Oracle Health Millennium's published R4 API: which interactions
// each resource type takes (the one table its CapabilityStatement and its refusals both come from), and the
// refusal, if any, of one write request. Reads and searches always pass: the profile is about what an outside
// writer may change, and Medplum answers every read as the default profile does.
import type { IncomingHttpHeaders } from 'node:http';
import type { OperationOutcome } from '@medplum/fhirtypes';
import { outcome } from '../http.ts';

export type Interaction = 'read' | 'search-type' | 'create' | 'update' | 'patch' | 'delete';

export interface TypeRules {
  interactions: readonly Interaction[];
  /** PUT `Type?criteria`. No type here declares conditional create: If-None-Exist is refused on every create. */
  conditionalUpdate: boolean;
}

const READ_ONLY: TypeRules = { interactions: ['read', 'search-type'], conditionalUpdate: false };
// What the adapter's document pusher needs, as the default profile declares it: it reads DocumentReference and
// Binary, and writes one Communication per document (found by identifier, then PUT by id or POSTed).
const AS_DEFAULT: TypeRules = { interactions: ['read', 'search-type', 'create', 'update'], conditionalUpdate: true };

/**
 * Practitioner and Location are the hospital's master data: read and searched, never written from outside.
 * Patient is created without conditional create and changed by JSON Patch; Appointment likewise (Millennium
 * books it into one of its Slots); Slot and Schedule are the EMR's availability, read only.
 */
export const VENDOR_RULES: Readonly<Record<string, TypeRules>> = {
  Patient: { interactions: ['read', 'search-type', 'create', 'patch'], conditionalUpdate: false },
  Practitioner: READ_ONLY,
  Location: READ_ONLY,
  Appointment: { interactions: ['read', 'search-type', 'create', 'patch'], conditionalUpdate: false },
  Slot: READ_ONLY,
  Schedule: READ_ONLY,
  DocumentReference: AS_DEFAULT,
  Binary: AS_DEFAULT,
  Communication: AS_DEFAULT,
};

/** A write request as the rules see it. */
export interface WriteRequest {
  method: string;
  /** The resource type the path names; '' for the base. */
  type: string;
  /** What the path names: the base, a type, one record, or anything else ($operations, _history). */
  level: 'system' | 'type' | 'instance' | 'other';
  /** undefined at the base or on a path the rules do not know: such a write is refused. */
  interaction: Interaction | undefined;
  /** A create carrying If-None-Exist, or an update, patch or delete naming its target by search criteria. */
  conditional: boolean;
}

export interface Refusal {
  status: 400 | 405;
  headers: Record<string, string>;
  body: OperationOutcome;
}

const INTERACTION_OF: Record<string, Interaction> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
const METHOD_OF: Record<Interaction, string> = { read: 'GET', 'search-type': 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' };

function levelOf(url: string): { type: string; level: WriteRequest['level']; search: boolean } {
  const [type = '', id, ...rest] = (url.split('?')[0] ?? '').split('/').filter(Boolean);
  const search = id === '_search' && rest.length === 0;
  if (type === '') return { type, level: 'system', search: false };
  if (type.startsWith('$') || (id !== undefined && (id.startsWith('$') || id.startsWith('_') || rest.length > 0))) return { type, level: 'other', search };
  return { type, level: id === undefined ? 'type' : 'instance', search: false };
}

/** The write a request makes, or undefined for a read or a search (GET, HEAD, POST Type/_search). */
export function writeRequest(method: string, url: string, headers: IncomingHttpHeaders): WriteRequest | undefined {
  const asked = INTERACTION_OF[method];
  const { type, level, search } = levelOf(url);
  if (!asked || (method === 'POST' && search)) return undefined;
  // POST creates at the type; PUT, PATCH and DELETE act on one record, or on the one their criteria find.
  const fits = method === 'POST' ? level === 'type' : level === 'instance' || level === 'type';
  const conditional = method === 'POST' ? headers['if-none-exist'] !== undefined : level === 'type';
  return { method, type, level, interaction: fits ? asked : undefined, conditional };
}

/** The methods the path takes under the rules (a 405's Allow header). */
function allowed(write: WriteRequest): string {
  const rules = VENDOR_RULES[write.type];
  const writes: Interaction[] =
    write.level === 'type'
      ? ['create', ...(rules?.conditionalUpdate ? (['update'] as const) : [])]
      : write.level === 'instance'
        ? ['update', 'patch', 'delete']
        : [];
  return ['GET', ...writes.filter((i) => rules?.interactions.includes(i)).map((i) => METHOD_OF[i])].join(', ');
}

function notSupported(write: WriteRequest, text: string): Refusal {
  return { status: 405, headers: { allow: allowed(write) }, body: outcome('not-supported', text) };
}

/** undefined when the rules let the write through to the store. */
export function refusalOf(write: WriteRequest): Refusal | undefined {
  if (write.level === 'system' && write.method === 'POST') return notSupported(write, 'this server takes no transaction or batch Bundle');
  const rules = VENDOR_RULES[write.type];
  if (!write.interaction) return notSupported(write, `${write.method} ${write.type || '/'}: no such interaction on this server`);
  if (!rules?.interactions.includes(write.interaction)) return notSupported(write, `${write.type || 'this server'} does not support ${write.interaction}`);
  // Oracle's create documents no If-None-Exist (and its CapabilityStatement declares no conditional create), so a
  // server modelled on it cannot honour the header: 400, a request it will not carry out as asked. 412 would say
  // the criteria matched several records, which is not what happened.
  if (write.interaction === 'create' && write.conditional)
    return { status: 400, headers: {}, body: outcome('not-supported', `${write.type}: conditional create (If-None-Exist) is not supported`) };
  if (write.conditional && !(write.interaction === 'update' && rules.conditionalUpdate))
    return { status: 400, headers: {}, body: outcome('not-supported', `${write.type}: conditional ${write.interaction} is not supported`) };
  return undefined;
}
