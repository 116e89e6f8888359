// Spans carry identifiers only (issue 25): the whole system runs with tracing on, its webhooks and documents
// carrying this run's marker strings where patient data goes (patient and doctor names, phones, notes, location
// names, document labels, PDF bytes), and neither any span (its name, attributes, events, status, resource) nor
// any byte the exporter sent holds one of them, in any form (bytes, hex, base64: ../support/marker-scan.ts).
// A forged webhook carrying the markers is refused, and its receipt span holds none either. The spans do describe
// that work: they name the marked patient and documents by their ids.
import { afterEach, describe, expect, it } from 'vitest';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';
import { emrPatient, labReportDocument } from '../support/fhir-builders.ts';
import { describeHits, type Marker, markerScanner, pdfWithMarker, randomPhone, randomWord } from '../support/marker-scan.ts';
import { type OtlpReceiver, spansAsText, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };

let s: Stack | undefined;
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
  await receiver?.close();
  receiver = undefined;
});

describe('what spans carry', () => {
  it('is never a name, phone, note, label or file sent in a body: identifiers only', async () => {
    receiver = await startOtlpReceiver();
    s = await startStack({ clinic: NO_QUIET_HOURS, settings: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PUSHER_SCAN_CRON: '* * * * * *' } });
    const m = {
      patient: randomWord(),
      phone: randomPhone(),
      notes: randomWord(),
      doctor: randomWord(),
      location: randomWord(),
      label: randomWord(),
      docPatient: randomWord(),
      docPhone: randomPhone(),
      emrLabel: randomWord(),
      emrPatient: randomWord(),
      emrPhone: randomPhone(),
      pdf: randomWord(),
      forged: randomWord(),
    };
    const markers: Marker[] = [
      { role: 'patient name', value: m.patient },
      { role: 'patient phone', value: m.phone },
      { role: 'appointment notes', value: m.notes },
      { role: 'doctor name', value: m.doctor },
      { role: 'doctor name', value: m.location },
      { role: 'document label', value: m.label },
      { role: 'patient name', value: m.docPatient },
      { role: 'patient phone', value: m.docPhone },
      { role: 'document label', value: m.emrLabel },
      { role: 'patient name', value: m.emrPatient },
      { role: 'patient phone', value: m.emrPhone },
      { role: 'PDF bytes', value: m.pdf },
      { role: 'patient name', value: m.forged },
    ];

    // An appointment with a new patient, its doctor and location, then rescheduled: webhooks with every marker.
    const made = await s.simPost<{ serviceId: string; patient: { serviceId: string } }>('/_sim/appointments', {
      clinicId: s.clinicId,
      notes: m.notes,
      patient: { name: m.patient, phone: m.phone },
      doctor: { name: m.doctor },
      location: { name: m.location },
    });
    expect(made.status).toBe(201);
    await s.simPost(`/_sim/appointments/${made.body.serviceId}/reschedule`, { startsAt: '2027-05-05T09:30:00.000Z' });
    // A lab report through the admin API, and one filed in the EMR, both with a patient and a label of markers.
    const externalId = `traced-${randomWord(8)}`;
    const pushed = await s.admin('POST', '/documents', {
      documentType: 'lab_report',
      externalId,
      patientName: m.docPatient,
      patientPhone: m.docPhone,
      label: m.label,
      file: { base64: pdfWithMarker(m.pdf).toString('base64'), filename: 'report.pdf' },
    });
    expect(pushed.status).toBe(202);
    const patient = await s.fhirCreate(emrPatient(m.emrPhone, { name: [{ text: m.emrPatient }] }));
    const filed = await s.fhirCreate(labReportDocument(patient.id, m.emrLabel, { data: pdfWithMarker(m.pdf).toString('base64') }));
    // A forged webhook with the markers in its body: refused (401), its receipt a span all the same.
    const forgedBody = Buffer.from(JSON.stringify({ eventId: 'forged-1', eventType: 'patient.created', patient: { name: m.forged, phone: m.phone } }));
    const forgedHeaders = signedWebhookHeaders({
      keyId: 'not-the-key',
      secrets: ['whsec_not_the_secret'],
      timestamp: Math.floor(Date.now() / 1000),
      body: forgedBody,
      eventId: 'forged-1',
      eventType: 'patient.created',
      attempt: 1,
    });
    const forged = await fetch(s.adapter.webhookUrl, { method: 'POST', headers: { ...forgedHeaders, 'content-type': 'application/json' }, body: forgedBody });
    expect(forged.status).toBe(401);

    // Until the work is done: the appointment applied twice, its mapping posted, both documents written back SENT.
    const applied = (name: string, key: string, value: string, attr = 'emr_bridge.event.outcome', expected = 'applied') =>
      receiver!.spans.filter((x) => x.name === name && x.attributes[key] === value && x.attributes[attr] === expected).length;
    await waitFor(
      () =>
        applied('event process', 'emr_bridge.service_id', made.body.serviceId) >= 2 &&
        applied('document write-back', 'emr_bridge.document.external_id', filed.id, 'emr_bridge.document.status', 'SENT') >= 1 &&
        applied('document send', 'emr_bridge.document.external_id', externalId, 'emr_bridge.document.status', 'SENT') >= 1 &&
        receiver!.spans.some((x) => x.name === 'mapping post' && x.attributes['emr_bridge.service_id'] === made.body.serviceId),
      30_000,
    );
    await s.close();
    s = undefined;

    const spans = receiver.spans;
    expect(spans.length).toBeGreaterThan(30);
    // The spans describe the marked work by its identifiers.
    const text = spansAsText(spans);
    expect(text).toContain(made.body.patient.serviceId);
    expect(text).toContain(externalId);
    expect(text).toContain(filed.id);
    expect(spans.some((x) => x.name === 'POST /webhooks/service' && x.attributes['emr_bridge.verification'] !== 'valid')).toBe(true);
    // And hold none of the data: not in what was decoded, not in any byte sent.
    const scanner = markerScanner(markers);
    const hits = [
      ...scanner.scanBuffer('the spans, decoded', Buffer.from(text)),
      ...receiver.requests.flatMap((r, i) => scanner.scanBuffer(`export request ${i + 1} (${r.contentType})`, r.body)),
    ];
    expect(hits, describeHits(hits)).toEqual([]);
    // The scan finds a marker where there is one (its own control).
    expect(scanner.scanBuffer('control', Buffer.concat([receiver.requests[0]!.body, Buffer.from(m.patient)]))).toHaveLength(1);
  }, 60_000);
});
