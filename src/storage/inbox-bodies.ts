// The inbox's stored bodies, sealed (src/sealing/, ./sealed-contexts.ts), opened for the processor's one parse
// (src/contract/stored-event.ts). Engine-neutral and synchronous: both engines run it inside their intake's
// transaction.
//
// A body that does not open is a reason, as a malformed one is: its event becomes a dead letter naming the key
// id, replayable once the key is back. Unless no body of an intake opens for want of a key: then the data keys
// this process was given are wrong (a replica started with another key file), and intake stops as an incident
// (DataKeysIncidentError) rather than dead-lettering every event until someone notices.
import { type Parsed, parseStoredEvent } from '../contract/stored-event.ts';
import { AppError } from '../errors.ts';
import { DataKeyMissingError } from '../sealing/errors.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { INBOX_BODY, sealContext } from './sealed-contexts.ts';

/** The stored bytes of an inbox row as read, and its eventId (the row's identity the body was sealed for). */
export interface StoredBody {
  eventId: string;
  body: Buffer | null;
}

/** The plain body of a stored row (null once retention pruned it); throws the sealing error when it does not open. */
export function openInboxBody(sealer: Sealer, row: StoredBody): Buffer | null {
  return row.body === null ? null : sealer.open(row.body, sealContext(INBOX_BODY, row.eventId));
}

/** Every one of an intake's bodies failed to open for want of a key: the process's key set is wrong. */
export class DataKeysIncidentError extends AppError {
  constructor(readonly kids: readonly string[]) {
    super({
      code: 'data_keys_incident',
      status: 503,
      retryable: true,
      message: `no stored webhook body of this intake opens: data key${kids.length > 1 ? 's' : ''} ${kids.join(', ')} missing from the configured data keys; intake waits until they are given`,
    });
  }
}

/**
 * One stored body opened and parsed (an intake's, or the claim of an event another process took in). A body
 * that does not open is a reason naming the fault; `onMissingKey` hears the key id when its key is missing.
 */
export function parseInboxBody(sealer: Sealer, row: StoredBody, onMissingKey?: (kid: string) => void): Parsed {
  let body: Buffer | null;
  try {
    body = openInboxBody(sealer, row);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err instanceof DataKeyMissingError) onMissingKey?.(err.kid);
    return { ok: false, reason: `${err.code}: ${err.message}` };
  }
  return parseStoredEvent(body, row.eventId);
}

/**
 * An intake's bodies opened and parsed, in order. Throws DataKeysIncidentError when not one opened because its
 * key is missing (see the file's head).
 */
export function parseIntakeBodies(sealer: Sealer, rows: readonly StoredBody[]): Parsed[] {
  const missing = new Set<string>();
  let unopened = 0;
  const parsed = rows.map((row) =>
    parseInboxBody(sealer, row, (kid) => {
      missing.add(kid);
      unopened++;
    }),
  );
  if (rows.length > 0 && unopened === rows.length) throw new DataKeysIncidentError([...missing]);
  return parsed;
}
