// Optional durability for the bundled FHIR server: every resource it writes is appended to a JSON-lines
// file, and the file is replayed into a fresh memory repository on start. The last line for an id wins;
// a deletion is a line {"deleted": "Type/id"}; what one request wrote (a transaction's entries) is one line
// {"entries": [...]}, so a line torn by a crash takes the whole request with it, never part of a transaction.
// Enough for a demo EMR that survives `npm start` restarts.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MemoryRepository } from '@medplum/fhir-router';
import type { Resource } from '@medplum/fhirtypes';

/** A resource written, or a deletion (`Type/id`). */
export type JournalEntry = Resource | { deleted: string };

export interface ResourceJournal {
  /** What one request wrote, in the order it was applied: one line, whatever the number of entries. */
  record(entries: JournalEntry[]): void;
}

/** A line as read: a resource, a deletion, or a request's entries. */
type LineEntry = { resourceType?: string; id?: string; deleted?: unknown };
type Line = LineEntry & { entries?: LineEntry[] };

export async function replayJournal(file: string, repo: MemoryRepository): Promise<number> {
  if (!existsSync(file)) return 0;
  const latest = new Map<string, Resource | undefined>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let read: Line;
    try {
      read = JSON.parse(line) as Line;
    } catch {
      continue; // A torn last line after a crash: what was written before it stands.
    }
    for (const entry of Array.isArray(read.entries) && !read.resourceType ? read.entries : [read]) {
      if (!entry.resourceType && typeof entry.deleted === 'string') latest.set(entry.deleted, undefined);
      else latest.set(`${entry.resourceType}/${entry.id}`, entry as Resource);
    }
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
    record(entries) {
      if (entries.length === 0) return;
      appendFileSync(file, `${JSON.stringify(entries.length === 1 ? entries[0] : { entries })}\n`);
    },
  };
}
