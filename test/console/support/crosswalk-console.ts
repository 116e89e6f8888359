// The console over a real crosswalk (src/crosswalk/) on a processor's SQLite stores, beside an in-memory EMR that
// keeps its doctors and locations to itself (and its patients, when asked) and holds master records by the names
// the test events give: the doctor and a namesake (two suggestions), and the location. Events wait once processed.
import { crosswalkOverStores } from '../../../src/crosswalk/crosswalk.ts';
import type { MappedEntityType } from '../../../src/emr/port.ts';
import { appointmentEvent, processorFixture } from '../../support/processor-fixture.ts';
import { consoleApp } from './console-app.ts';
import { fakeAuditor } from './fakes.ts';

export function crosswalkConsole(opts: { ownsPatients?: boolean } = {}) {
  const f = processorFixture();
  const owned: MappedEntityType[] = ['doctor', 'location', ...(opts.ownsPatients ? (['patient'] as const) : [])];
  for (const t of owned) f.emr.creatable.delete(t);
  const ids = {
    doctor: f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' }),
    namesake: f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctorow' }),
    location: f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' }),
  };
  const auditor = fakeAuditor(f.clock);
  const crosswalk = crosswalkOverStores(f.stores, { emr: f.emr, auditor });
  const c = consoleApp({ clock: f.clock, crosswalk, auditor });
  return {
    f,
    c,
    crosswalk,
    ids,
    /** Appointments of the clinic's one doctor and location, processed once: each waits. */
    async waitingAppointments(serviceIds: string[]): Promise<string[]> {
      const events = serviceIds.map((s) => f.store(appointmentEvent({ serviceId: s })));
      await f.processor.runOnce();
      return events;
    },
  };
}
