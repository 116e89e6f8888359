// What the bundled HL7 EMR keeps: patients (with the MRNs it assigned), appointments (with their filler
// ids), the MSH-10s it has applied, and the queue of messages it still has to send. Each change is one
// commit; with a data file every commit is one JSON line appended before the message is acknowledged, so a
// torn last line after a crash loses that commit whole. On start the file is replayed and rewritten compacted.
// The log of received messages is kept in memory only.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EmrAppointment, EmrPatient, ReceivedMessage } from './model.ts';

/** A message waiting to go to the notify target, as it will be sent (its MSH-10 fixed). */
export interface QueuedMessage {
  id: string;
  /** MSH-9, for logs. */
  type: string;
  text: string;
  /**
   * The entity it is about (`patient:<id>`, `appointment:<id>`): with several notify connections, messages
   * with one key keep their order. Absent in data files written before it: those share one lane.
   */
  key?: string;
}

/** One commit: everything one received message (or one filed document) changes. */
export interface Commit {
  patients?: EmrPatient[];
  appointments?: EmrAppointment[];
  /** Keys (MSH-3|MSH-4|MSH-10) of messages applied. */
  applied?: string[];
  queued?: QueuedMessage[];
  /** Ids of queued messages the target acknowledged AA. */
  delivered?: string[];
}

export interface EmrState {
  patient(serviceId: string): EmrPatient | undefined;
  patientByMrn(mrn: string): EmrPatient | undefined;
  patients(): EmrPatient[];
  appointment(serviceId: string): EmrAppointment | undefined;
  appointments(): EmrAppointment[];
  isApplied(key: string): boolean;
  nextMrn(): string;
  nextFillerId(): string;
  commit(c: Commit): void;
  /** The messages not yet delivered, oldest first. */
  queued(): QueuedMessage[];
  /** Calls `listener` with each message queued from now on, once it is committed; returns the unsubscribe. */
  onQueued(listener: (m: QueuedMessage) => void): () => void;
  pending(): number;
  received(): ReceivedMessage[];
  recordReceived(r: ReceivedMessage): void;
}

const MAX_RECEIVED = 10_000;

const numbered = (prefix: string, n: number): string => `${prefix}${String(n).padStart(6, '0')}`;
const numberOf = (id: string): number => Number(/(\d+)$/.exec(id)?.[1] ?? 0);

export function createEmrState(dataFile?: string): EmrState {
  const patients = new Map<string, EmrPatient>();
  const appointments = new Map<string, EmrAppointment>();
  const applied = new Set<string>();
  const queue = new Map<string, QueuedMessage>();
  const received: ReceivedMessage[] = [];
  const listeners = new Set<(m: QueuedMessage) => void>();
  let lastMrn = 0;
  let lastFiller = 0;

  const apply = (c: Commit): void => {
    for (const p of c.patients ?? []) {
      patients.set(p.serviceId, { ...p });
      lastMrn = Math.max(lastMrn, numberOf(p.mrn));
    }
    for (const a of c.appointments ?? []) {
      appointments.set(a.serviceId, { ...a });
      lastFiller = Math.max(lastFiller, numberOf(a.fillerId));
    }
    for (const key of c.applied ?? []) applied.add(key);
    for (const m of c.queued ?? []) queue.set(m.id, m);
    for (const id of c.delivered ?? []) queue.delete(id);
  };

  if (dataFile) {
    mkdirSync(dirname(dataFile), { recursive: true });
    if (existsSync(dataFile)) {
      for (const line of readFileSync(dataFile, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          apply(JSON.parse(line) as Commit);
        } catch {
          // A torn last line after a crash: the commits before it stand.
        }
      }
    }
    const snapshot: Commit = { patients: [...patients.values()], appointments: [...appointments.values()], applied: [...applied], queued: [...queue.values()] };
    writeFileSync(`${dataFile}.tmp`, `${JSON.stringify(snapshot)}\n`);
    renameSync(`${dataFile}.tmp`, dataFile);
  }

  return {
    patient: (serviceId) => copy(patients.get(serviceId)),
    patientByMrn: (mrn) => copy([...patients.values()].find((p) => p.mrn === mrn)),
    patients: () => [...patients.values()].map((p) => ({ ...p })),
    appointment: (serviceId) => copy(appointments.get(serviceId)),
    appointments: () => [...appointments.values()].map((a) => ({ ...a })),
    isApplied: (key) => applied.has(key),
    nextMrn: () => numbered('MRN', ++lastMrn),
    nextFillerId: () => numbered('APT', ++lastFiller),
    commit(c) {
      // Written first: what is acknowledged is on disk.
      if (dataFile) appendFileSync(dataFile, `${JSON.stringify(c)}\n`);
      apply(c);
      for (const m of c.queued ?? []) for (const listener of listeners) listener(m);
    },
    queued: () => [...queue.values()],
    onQueued(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    pending: () => queue.size,
    received: () => received.map((r) => ({ ...r })),
    recordReceived(r) {
      received.push(r);
      if (received.length > MAX_RECEIVED) received.shift();
    },
  };
}

const copy = <T extends object>(v: T | undefined): T | undefined => (v ? { ...v } : undefined);
