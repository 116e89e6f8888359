// Where patient data is stored sealed (src/sealing/, docs/data-at-rest.md), and the context each value is sealed
// for: the row's identity (table, column, key), bound to the value as the cipher's associated data, so a value
// copied into another row does not open. Every column listed here holds a sealed value (or, written before
// sealing or with DATA_ENCRYPTION=off, a clear one); docs/data-at-rest.md lists them for a security review.
// Identifiers the adapter searches by (eventId, externalId, serviceId) stay in clear beside them.

/** A sealed column: its table and column, and the key column that names a row. */
export interface SealedColumn {
  table: string;
  column: string;
  key: string;
  /** The column holds bytes (BLOB, bytea): a sealed value is stored packed (src/sealing/format.ts); else compact text. */
  bytes: boolean;
}

/** inbox_events.body: the webhook's raw bytes (names, phones, notes), until retention drops them. */
export const INBOX_BODY: SealedColumn = { table: 'inbox_events', column: 'body', key: 'event_id', bytes: true };

/** outbox_documents.request: the document request (patient name and phone, label, the file's bytes) until final. */
export const OUTBOX_REQUEST: SealedColumn = { table: 'outbox_documents', column: 'request', key: 'external_id', bytes: false };

/** webhook_quarantine.body: a signed webhook over WEBHOOK_MAX_BODY_BYTES, kept until applied or dismissed. */
export const QUARANTINE_BODY: SealedColumn = { table: 'webhook_quarantine', column: 'body', key: 'event_id', bytes: true };

export const SEALED_COLUMNS: readonly SealedColumn[] = [INBOX_BODY, OUTBOX_REQUEST, QUARANTINE_BODY];

/** The context a value of `column` is sealed for in the row whose key is `key`. */
export const sealContext = (column: SealedColumn, key: string): string => `${column.table}/${column.column}/${key}`;
