// Optional durability for the bundled FHIR server: every resource it writes is appended to a JSON-lines
// file, and the file is replayed into a fresh memory repository on start. The last line for an id wins;
// a deletion is a line {"deleted": "Type/id"}. Enough for a demo EMR that survives `npm start` restarts.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MemoryRepository } from '@medplum/fhir-router';
import type { Resource } from '@medplum/fhirtypes';

export interface ResourceJournal {
  record(resource: Resource): void;
  recordDeletion(reference: string): void;
}

export async function replayJournal(file: string, repo: MemoryRepository): Promise<number> {
  if (!existsSync(file)) return 0;
  const latest = new Map<string, Resource | undefined>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let entry: { resourceType?: string; id?: string; deleted?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // A torn last line after a crash: the resource before it stands.
    }
    if (!entry.resourceType && typeof entry.deleted === 'string') latest.set(entry.deleted, undefined);
    else latest.set(`${entry.resourceType}/${entry.id}`, entry as Resource);
  }
  let count = 0;
  for (const resource of latest.values()) {
    if (!resource) continue;
    // createResource keeps the stored meta (versionId, lastUpdated): a restart must not make every record look changed.
    await repo.createResource(resource);
    count++;
  }
  return count;
}

export function createJournal(file: string): ResourceJournal {
  mkdirSync(dirname(file), { recursive: true });
  return {
    record: (resource) => appendFileSync(file, `${JSON.stringify(resource)}\n`),
    recordDeletion: (reference) => appendFileSync(file, `${JSON.stringify({ deleted: reference })}\n`),
  };
}
