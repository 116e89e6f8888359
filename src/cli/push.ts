// `emr-bridge push lab-report|prescription --file F --external-id ID …`: hands one document to a running
// adapter's outbox (POST /admin/documents), which checks it, sends it once and follows it to the end.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { loadConfig } from '../config.ts';
import { DOCUMENT_TYPES, type DocumentType } from '../contract/events.ts';
import { UsageError, parse } from './args.ts';
import { SPECS } from './specs.ts';
import { adminClientFrom, report } from './admin-client.ts';
import { print } from './output.ts';

const TYPES: Record<string, DocumentType> = { 'lab-report': 'lab_report', prescription: 'prescription' };

export async function pushCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.push);
  const documentType = TYPES[positionals[0] ?? ''] ?? (DOCUMENT_TYPES as readonly string[]).find((t) => t === positionals[0]);
  if (!documentType)
    throw new UsageError(
      'usage: push lab-report|prescription --file F --external-id ID --label L (--patient-external-id P | --patient-phone P --patient-name N)',
    );
  for (const required of ['file', 'external-id', 'label'] as const) if (!values[required]) throw new UsageError(`--${required} is required`);

  const bytes = readFileSync(values.file!);
  const body = {
    documentType,
    externalId: values['external-id'],
    label: values.label,
    ...(values['patient-external-id'] ? { patientExternalId: values['patient-external-id'] } : {}),
    ...(values['patient-phone'] ? { patientPhone: values['patient-phone'] } : {}),
    ...(values['patient-name'] ? { patientName: values['patient-name'] } : {}),
    ...(values['doctor-phone'] && documentType === 'prescription' ? { doctorPhone: values['doctor-phone'] } : {}),
    file: {
      base64: bytes.toString('base64'),
      filename: values.filename ?? basename(values.file!),
      ...(values['mime-type'] ? { mimeType: values['mime-type'] } : {}),
    },
  };
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  return report(await admin.call('POST', '/documents', body), print);
}
