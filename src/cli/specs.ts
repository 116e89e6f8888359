// Every command of `emr-bridge`, with every option it takes, what it means and its default: the one
// list that parsing, `--help` and the command reference in docs/commands.md come from (a test checks it).

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** What a value looks like in the usage (e.g. N, URL, FILE). */
  value?: string;
  /** One line: what the option does. */
  help: string;
  /** The default as a person reads it; absent for flags and options without one. */
  default?: string;
}

export interface CommandSpec {
  name: string;
  /** The positional arguments (and verbs) as the usage shows them. */
  args?: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Lines after the options: the verbs of a command that has several, and notes. */
  notes?: string[];
}

const adminOptions = {
  'admin-url': {
    type: 'string',
    value: 'URL',
    help: "the adapter's admin API base",
    default: 'the running adapter (ADMIN_PORT, PORT, or the zero-configuration adapter in DATA_DIR)',
  },
  'admin-token': {
    type: 'string',
    value: 'TOKEN',
    help: "admin bearer token (ADMIN_TOKEN's, or a named credential's)",
    default: 'ADMIN_TOKEN, or the one a zero-configuration adapter generated',
  },
} as const satisfies Record<string, OptionSpec>;

const pagingOptions = {
  limit: { type: 'string', value: 'N', help: 'rows per page (1..500)', default: '100' },
  cursor: { type: 'string', value: 'C', help: 'the nextCursor of the previous page' },
  type: { type: 'string', value: 'TYPE', help: 'only this type (event type; document type for documents)' },
  since: { type: 'string', value: 'TIME', help: 'only rows from this ISO 8601 time on' },
  until: { type: 'string', value: 'TIME', help: 'only rows before this ISO 8601 time' },
} as const satisfies Record<string, OptionSpec>;

const portOption = (def: string) => ({ type: 'string', value: 'N', help: 'port to listen on (0 picks a free one)', default: def }) as const;
const hostOption = { type: 'string', value: 'ADDRESS', help: 'address to listen on', default: 'HOST, else 127.0.0.1' } as const;

export const SPECS = {
  serve: {
    name: 'serve',
    summary: 'the adapter (receiver, processor, pusher, admin API); with nothing configured, also the bundled simulator and FHIR server',
    options: { port: portOption('PORT, else 3000'), host: hostOption },
  },
  simulator: {
    name: 'simulator',
    summary: 'the bundled service simulator alone',
    options: {
      port: portOption('4000'),
      host: hostOption,
      db: { type: 'string', value: 'FILE', help: "the simulator's SQLite file", default: 'SIMULATOR_DATABASE_PATH, else in memory' },
    },
  },
  'fhir-server': {
    name: 'fhir-server',
    summary: 'the bundled FHIR R4 server alone (its address is its FHIR base URL)',
    options: {
      port: portOption('8103'),
      host: hostOption,
      'data-file': { type: 'string', value: 'FILE', help: 'JSON-lines file that keeps the data across restarts', default: 'in memory' },
      auth: { type: 'string', value: 'none|smart', help: 'require SMART Backend Services sign-in', default: 'none' },
      client: { type: 'string', multiple: true, value: 'ID=JWKS_FILE', help: 'register a client by its public JWKS (repeatable; with --auth smart)' },
      'token-lifetime': { type: 'string', value: 'S', help: 'lifetime of the access tokens it issues, in seconds', default: '300' },
      'no-transactions': {
        type: 'boolean',
        help: 'declare and serve no transaction Bundles (a Bundle posted to the base answers 405), as many vendor EMRs',
      },
      'no-conditional-create': { type: 'boolean', help: 'declare no conditional create and ignore If-None-Exist (a plain create), as some EMRs' },
      profile: {
        type: 'string',
        value: 'default|vendor',
        help: 'vendor: an EMR that owns its records (Practitioner, Location read only; no conditional create or transactions), its master data from samples/emr-master-data.json',
        default: 'default',
      },
    },
  },
  'hl7-emr': {
    name: 'hl7-emr',
    summary: 'the bundled HL7 v2 EMR alone: acknowledges ADT/SIU over MLLP, assigns MRNs and appointment ids, notifies --notify',
    options: {
      port: { type: 'string', value: 'N', help: 'MLLP port to listen on (0 picks a free one)', default: '6661' },
      host: hostOption,
      notify: { type: 'string', value: 'URL', help: 'mllp://host:port to send its ADT/SIU notifications and filed documents to', default: 'none sent' },
      'notify-connections': {
        type: 'string',
        value: 'N',
        help: "connections to --notify sending at once (1..16); one patient's or appointment's messages stay in order",
        default: '1',
      },
      'control-port': { type: 'string', value: 'N', help: 'port of its HTTP control API (/_emr/: patients, appointments, documents, faults)', default: 'none' },
      'data-file': {
        type: 'string',
        value: 'FILE',
        help: 'JSON-lines file: patients, appointments, unsent messages kept across restarts',
        default: 'in memory',
      },
    },
    notes: ["The service's ids travel under HL7_ASSIGNING_AUTHORITY (default SERVICE); its own MRNs and filler ids under HOSPITAL."],
  },
  replay: {
    name: 'replay',
    args: '<file|folder>...',
    summary: 'signs sample payloads and posts them to a receiver; compares outcomes with expectations; sends .hl7 samples over MLLP',
    options: {
      to: { type: 'string', value: 'URL', help: 'the receiver to post to', default: "the running adapter's /webhooks/service" },
      secret: {
        type: 'string',
        multiple: true,
        value: 'S',
        help: 'signing secret (repeatable)',
        default: "SERVICE_SIGNING_SECRETS, or the zero-configuration adapter's",
      },
      'key-id': { type: 'string', value: 'K', help: 'X-Service-Key to send', default: "SERVICE_KEY_ID, or the zero-configuration adapter's" },
      'fresh-ids': { type: 'boolean', help: 'give every event a new eventId (and document a new externalId), so a replay is not a duplicate' },
      concurrency: { type: 'string', value: 'N', help: "entities replayed at once (each entity's events stay in file order)", default: '4' },
      ...adminOptions,
      mllp: {
        type: 'string',
        value: 'URL',
        help: 'mllp://host:port (or mllps://) the .hl7 samples go to, one message at a time',
        default: "with EMR_PROTOCOL=hl7v2, the adapter's listener: mllp://127.0.0.1:<HL7_LISTEN_PORT>",
      },
    },
    notes: [
      '.hl7 files go over MLLP, one message at a time, byte for byte as the file has them (LF line ends become CR);',
      'each prints its MSH-9, MSH-10 and acknowledgment code (with the ERR text when not AA). With no listener to send',
      'to (no --mllp, not EMR_PROTOCOL=hl7v2), those found in a folder are left out. Exit 0 only when every JSON',
      'sample matched and every HL7 message was acknowledged AA.',
    ],
  },
  push: {
    name: 'push',
    args: 'lab-report|prescription',
    summary: "hands one document to a running adapter's outbox, which checks it, sends it once and follows it",
    options: {
      file: { type: 'string', value: 'FILE', help: 'the PDF, JPEG or PNG to send (required)' },
      'external-id': { type: 'string', value: 'ID', help: "the document's externalId (required)" },
      label: { type: 'string', value: 'TEXT', help: 'the label the patient sees (required)' },
      'patient-external-id': { type: 'string', value: 'ID', help: 'the patient, by an id the service knows' },
      'patient-phone': { type: 'string', value: 'PHONE', help: 'the patient, by phone (with --patient-name)' },
      'patient-name': { type: 'string', value: 'NAME', help: 'the patient, by name (with --patient-phone)' },
      'doctor-phone': { type: 'string', value: 'PHONE', help: "the issuing doctor's phone (prescriptions)" },
      filename: { type: 'string', value: 'NAME', help: 'the file name the patient sees', default: "--file's name" },
      'mime-type': { type: 'string', value: 'TYPE', help: 'the file type', default: 'from the file name' },
      ...adminOptions,
    },
  },
  documents: {
    name: 'documents',
    args: 'list | show <externalId> | retry <externalId>',
    summary: "the adapter's documents: list a page (filtered), show one, retry one that failed here",
    options: {
      status: { type: 'string', value: 'S', help: 'list only this status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED)' },
      ...pagingOptions,
      ...adminOptions,
    },
  },
  'dead-letters': {
    name: 'dead-letters',
    args: 'list | replay <eventId> | replay --all | dismiss <eventId> --reason R | replay-mapping <entityType> <serviceId> | dismiss-mapping <entityType> <serviceId> --reason R',
    summary: 'events and mappings parked for a person: list, replay, dismiss with a reason',
    options: {
      state: { type: 'string', value: 'dead|dismissed', help: 'list these', default: 'dead' },
      all: { type: 'boolean', help: 'with replay: every dead letter (or every one of --event-type)' },
      'event-type': { type: 'string', value: 'T', help: 'with replay --all: only this event type' },
      reason: { type: 'string', value: 'R', help: 'with dismiss: why (kept with it; required)' },
      ...pagingOptions,
      ...adminOptions,
    },
  },
  quarantine: {
    name: 'quarantine',
    args: 'list | apply <eventId> | dismiss <eventId> --reason R',
    summary: 'signed webhooks over WEBHOOK_MAX_BODY_BYTES, kept: list them, apply one (once the limit lets it in), dismiss one with a reason',
    options: {
      state: { type: 'string', value: 'quarantined|applied|dismissed', help: 'list these', default: 'quarantined' },
      reason: { type: 'string', value: 'R', help: 'with dismiss: why (kept with it; required)' },
      ...pagingOptions,
      ...adminOptions,
    },
  },
  downtime: {
    name: 'downtime',
    args: 'show | start --until T --reason R | end',
    summary: "the EMR's planned downtime: show what is in force and the next window, start one now until a time, end it",
    options: {
      until: { type: 'string', value: 'TIME', help: 'with start: when the EMR is expected back (ISO 8601 with a zone; within 31 days)' },
      reason: { type: 'string', value: 'R', help: 'with start: why (shown on the status page and the console; required)' },
      ...adminOptions,
    },
    notes: [
      'During a downtime the adapter makes no EMR call and spends no attempt; webhooks are still received. EMR_DOWNTIME',
      'plans recurring windows; start and end act now (operator role, audited).',
    ],
  },
  crosswalk: {
    name: 'crosswalk',
    args: 'import <file> | export',
    summary: "the crosswalk (service records to the EMR's): import mappings from a CSV file, or export every mapping as CSV",
    options: { ...adminOptions },
    notes: [
      'The CSV has the header entityType,serviceId,emrId (entityType: patient, doctor or location). import maps each line as',
      'PUT /admin/crosswalk/{entityType}/{serviceId} does (the EMR record read first, the mapping posted to the service once;',
      'operator role, audited) and prints how many it imported and each refused line with its reason; a refused line changes',
      'nothing. At most 1 MiB and 20,000 lines. export prints every mapping, whatever set it, to standard output.',
      'Exit status: 0 done; 1 a line or the file refused, or the adapter said no; 2 a bad command line.',
    ],
  },
  credentials: {
    name: 'credentials',
    args: 'add <name> --role viewer|operator | list | remove <name>',
    summary: 'named admin credentials with a role: add one (its token printed once, only its hash kept), list them, remove one',
    options: {
      role: { type: 'string', value: 'viewer|operator', help: 'with add: viewer reads; operator also replays, retries, dismisses and shows bodies' },
      file: {
        type: 'string',
        value: 'FILE',
        help: 'the credentials file (written mode 0600)',
        default: 'ADMIN_CREDENTIALS_FILE, else <DATA_DIR>/admin-credentials.json',
      },
    },
    notes: [
      'add prints the new token once on standard output; a name that exists gets a new token. The adapter reads the file',
      'at start (ADMIN_CREDENTIALS_FILE): restart it after a change. ADMIN_TOKEN stays the operator `admin`.',
    ],
  },
  audit: {
    name: 'audit',
    summary: 'the audit trail of a running adapter: every admin action and failed sign-in, newest first',
    options: {
      actor: { type: 'string', value: 'NAME', help: "only this credential's entries (- for failed sign-ins)" },
      action: { type: 'string', value: 'ACTION', help: 'only this action (dead_letter.replay, document.retry, sign_in, …)' },
      target: { type: 'string', value: 'ID', help: 'only entries naming this id (eventId, externalId, entityType:serviceId)' },
      since: { type: 'string', value: 'TIME', help: 'only entries from this ISO 8601 time on' },
      until: { type: 'string', value: 'TIME', help: 'only entries before this ISO 8601 time' },
      before: { type: 'string', value: 'N', help: 'only entries older than this id (the nextBefore of the previous page)' },
      limit: { type: 'string', value: 'N', help: 'entries per page (1..500)', default: '100' },
      ...adminOptions,
    },
  },
  schemas: {
    name: 'schemas',
    summary: 'JSON Schemas and OpenAPI documents generated from the zod schemas',
    options: {
      out: { type: 'string', value: 'DIR', help: 'where to write the JSON Schemas', default: 'samples/schemas' },
      'openapi-out': { type: 'string', value: 'DIR', help: 'where to write the OpenAPI documents', default: 'docs/openapi' },
      check: { type: 'boolean', help: 'only report whether the files are current (exit 1 if not)' },
    },
  },
  keys: {
    name: 'keys',
    args: 'generate',
    summary: 'a key pair for signing in to the EMR (SMART Backend Services); prints the public JWKS to register',
    options: {
      alg: { type: 'string', value: 'ES384|RS384', help: 'signing algorithm: EC P-384 or RSA 3072', default: 'ES384' },
      out: {
        type: 'string',
        value: 'FILE',
        help: 'where the private key is written (PKCS#8 PEM, mode 0600, never overwritten)',
        default: './fhir-private-key.pem',
      },
    },
  },
  'data-keys': {
    name: 'data-keys',
    args: 'generate | add | rotate | in-use',
    summary:
      'the keys that seal patient data at rest: a new key file, a new current key put first in one, every stored value re-sealed under the current key, the key ids in use',
    options: {
      out: { type: 'string', value: 'FILE', help: 'with generate: write the key file here (mode 0600) instead of printing it' },
      force: { type: 'boolean', help: 'with generate: replace an existing --out (its keys are lost: values sealed under them no longer open)' },
      file: {
        type: 'string',
        value: 'FILE',
        help: 'with add: the key file to add a key to (rewritten whole, mode 0600)',
        default: 'DATA_KEYS_PATH, else <DATA_DIR>/data-keys.json',
      },
      'page-size': { type: 'string', value: 'N', help: 'with rotate: values re-sealed per transaction (documents: a tenth of it)', default: '500' },
    },
    notes: [
      'generate makes a JWK Set with one new 256-bit key; add puts a new key first (it seals new values from the next start)',
      'and keeps the others, which still open older values. The new kid is printed on standard output. The adapter reads',
      'its keys at start: restart it after add. Replicas: a restarted one seals under the new key at once, which the others',
      'open only once they have the new file too (docs/data-at-rest.md, key rotation).',
      'rotate re-seals, online and beside a running serve, every stored value not under the current key (values in clear too),',
      'with a progress bar on standard error; run it again after a kill and it goes on. It then names the key ids still in use and',
      'the keys of the file no longer used by any value; in-use names them without changing anything (a pg_dump needs those keys).',
    ],
  },
  'fhir-get': {
    name: 'fhir-get',
    args: '<path>',
    summary: "reads the EMR signed in as the adapter would (e.g. fhir-get 'Appointment?_count=10') and prints the JSON",
    options: {},
  },
  migrate: {
    name: 'migrate',
    summary: "applies the configured database's pending migrations (PostgreSQL with DATABASE_URL, else the SQLite file) and exits",
    notes: [
      'Run it before the first serve on PostgreSQL and after each upgrade: serve never migrates an existing database, it refuses an',
      'outdated schema. On SQLite it is refused while a serve runs on the file. Exit status: 0 applied (or nothing to apply); 1 failed.',
    ],
    options: {},
  },
  backup: {
    name: 'backup',
    summary: "an online copy of the adapter's SQLite database (safe while serve runs)",
    notes: [
      'With DATABASE_URL set it refuses (exit 1): back PostgreSQL up with pg_dump, or base backups with WAL archiving.',
      'Exit status: 0 written; 1 no database there, DATABASE_URL set, or the copy failed; 2 the file exists, or a bad option.',
    ],
    options: {
      out: { type: 'string', value: 'FILE', help: 'where the copy goes (never overwritten)', default: '<DATA_DIR>/backups/emr-bridge-<UTC time>.db' },
    },
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof SPECS;

function optionLine(name: string, o: OptionSpec): string {
  const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
  return `  ${flag.padEnd(30)} ${o.help}${o.default ? ` (default: ${o.default})` : ''}`;
}

/** The text `emr-bridge <command> --help` prints. */
export function usageOf(spec: CommandSpec): string {
  return [
    `usage: emr-bridge ${spec.name}${spec.args ? ` ${spec.args}` : ''} [options]`,
    '',
    spec.summary,
    '',
    ...Object.entries(spec.options).map(([name, o]) => optionLine(name, o)),
    optionLine('help', { type: 'boolean', short: 'h', help: 'this text' }),
    ...(spec.notes?.length ? ['', ...spec.notes] : []),
  ].join('\n');
}

/** The text `emr-bridge --help` prints. */
export function overview(): string {
  return [
    'usage: emr-bridge <command> [options]',
    '',
    ...Object.values(SPECS).map((s: CommandSpec) => `  ${s.name.padEnd(14)} ${s.summary}`),
    '',
    'Each command answers --help. Settings come from the environment or .env (see .env.example).',
  ].join('\n');
}

/** The command reference of docs/commands.md (between its `commands` markers): every command's usage, as --help prints it. */
export function commandReference(): string {
  return Object.values(SPECS)
    .map((s: CommandSpec) => `\`npx emr-bridge ${s.name}\`\n\n\`\`\`\n${usageOf(s)}\n\`\`\``)
    .join('\n\n');
}
