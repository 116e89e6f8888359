// The errors of sealing: a key file or command that cannot be used, and a sealed value that does not open
// (its key missing, the value damaged, or sealed for another row). Each message names a setting, a path, a
// key id or a value's context (identifiers only); never key material, never a value's content.
import { AppError } from '../errors.ts';

/** The data keys cannot be read or are not a valid key file: start-up stops with this. */
export class DataKeysError extends AppError {
  constructor(message: string) {
    super({ code: 'data_keys_unusable', status: 500, message });
  }
}

/** A value sealed under a key id the configured key set does not hold. */
export class DataKeyMissingError extends AppError {
  constructor(
    readonly kid: string,
    readonly context?: string,
  ) {
    super({
      code: 'data_key_missing',
      status: 500,
      message: `${context ? `the value of ${context}` : 'a value'} is sealed under data key ${kid}, which the configured data keys do not hold (put that key back into the key file, after the current one)`,
    });
  }
}

/** What is wrong with a sealed value that does not open. */
export type SealedValueFault = 'malformed' | 'altered';

const FAULTS: Record<SealedValueFault, string> = {
  malformed: 'it is truncated or malformed',
  altered: 'it fails authentication (altered, or sealed under another key bearing that key id)',
};

/** A sealed value that is truncated, malformed, or fails authentication. */
export class SealedValueInvalidError extends AppError {
  constructor(
    readonly fault: SealedValueFault,
    readonly context?: string,
  ) {
    super({
      code: 'sealed_value_invalid',
      status: 500,
      message: `${context ? `the sealed value of ${context}` : 'a sealed value'} does not open: ${FAULTS[fault]}`,
    });
  }
}

/** A sealed value that opens, but was sealed for another row: a value moved or copied there. */
export class SealedValueMisplacedError extends AppError {
  constructor(
    readonly expected: string,
    readonly found: string,
  ) {
    super({
      code: 'sealed_value_misplaced',
      status: 500,
      message: `the value read for ${expected} was sealed for ${found.slice(0, 200)}: a sealed value opens only in the row it was sealed for`,
    });
  }
}
