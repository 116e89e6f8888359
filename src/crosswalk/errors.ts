// Why a mapping a person asked for was not made: each a 422 with a stable code, never retryable (the same request
// gets the same answer until the EMR or the crosswalk changes).
import { AppError } from '../errors.ts';

export type CrosswalkRefusalCode =
  /** The EMR has no record with that id (of that type). */
  | 'emr_record_not_found'
  /** One person, one chart: another service patient is already mapped to that EMR patient. */
  | 'patient_chart_taken'
  /** The adapter already found or created this record's EMR record, and it is another one. */
  | 'mapped_by_adapter';

export class CrosswalkRefusal extends AppError {
  declare readonly code: CrosswalkRefusalCode;

  constructor(code: CrosswalkRefusalCode, message: string) {
    super({ code, status: 422, message });
  }
}
