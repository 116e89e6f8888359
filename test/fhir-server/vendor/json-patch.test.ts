// RFC 6902 as the vendor profile applies a PATCH before its rules see the result: each operation, the pointer's
// escapes and array places, the record left untouched, and a patch that is not one or does not apply named.
import { describe, expect, it } from 'vitest';
import { applyPatch, PatchError, parsePatch } from '../../../src/fhir-server/vendor/json-patch.ts';

const appointment = () => ({
  resourceType: 'Appointment',
  status: 'booked',
  slot: [{ reference: 'Slot/a' }],
  participant: [{ actor: { reference: 'Patient/1' }, status: 'accepted' }],
  'a/b': 1,
  'm~n': 2,
});

describe('applyPatch', () => {
  it.each([
    ['replace a value', [{ op: 'replace', path: '/status', value: 'cancelled' }], { status: 'cancelled' }],
    ['replace a whole array', [{ op: 'replace', path: '/slot', value: [{ reference: 'Slot/b' }] }], { slot: [{ reference: 'Slot/b' }] }],
    ['replace inside an array', [{ op: 'replace', path: '/slot/0/reference', value: 'Slot/c' }], { slot: [{ reference: 'Slot/c' }] }],
    ['add a new member', [{ op: 'add', path: '/comment', value: 'late' }], { comment: 'late' }],
    [
      'append to an array with -',
      [{ op: 'add', path: '/slot/-', value: { reference: 'Slot/z' } }],
      { slot: [{ reference: 'Slot/a' }, { reference: 'Slot/z' }] },
    ],
    ['insert at an index', [{ op: 'add', path: '/slot/0', value: { reference: 'Slot/z' } }], { slot: [{ reference: 'Slot/z' }, { reference: 'Slot/a' }] }],
    ['remove a member', [{ op: 'remove', path: '/status' }], { status: undefined }],
    [
      'read ~1 as / and ~0 as ~',
      [
        { op: 'replace', path: '/a~1b', value: 3 },
        { op: 'remove', path: '/m~0n' },
      ],
      { 'a/b': 3, 'm~n': undefined },
    ],
    ['move a value', [{ op: 'move', from: '/status', path: '/comment' }], { status: undefined, comment: 'booked' }],
    ['copy a value', [{ op: 'copy', from: '/status', path: '/comment' }], { status: 'booked', comment: 'booked' }],
    [
      'pass a test that holds',
      [
        { op: 'test', path: '/slot/0', value: { reference: 'Slot/a' } },
        { op: 'replace', path: '/status', value: 'noshow' },
      ],
      { status: 'noshow' },
    ],
  ])('can %s', (_what, operations, expected) => {
    const record = appointment();
    const result = applyPatch(record, parsePatch(operations)) as Record<string, unknown>;
    for (const [key, value] of Object.entries(expected)) expect(result[key]).toEqual(value);
    expect(record).toEqual(appointment());
  });

  it.each([
    ['a test that fails', [{ op: 'test', path: '/status', value: 'cancelled' }], /operation 0 \(test \/status\): is not the value/],
    ['a replace of nothing', [{ op: 'replace', path: '/comment', value: 'x' }], /operation 0 \(replace \/comment\): there is nothing there/],
    ['a remove past the array', [{ op: 'remove', path: '/slot/3' }], /there is nothing there/],
    ['an add past the array', [{ op: 'add', path: '/slot/5', value: {} }], /not a place in the array/],
    ['a path under a value', [{ op: 'add', path: '/status/x', value: 1 }], /parent is not an object/],
    ['the whole record', [{ op: 'replace', path: '', value: {} }], /starting with \//],
    ['a move into itself', [{ op: 'move', from: '/slot', path: '/slot/0' }], /into itself/],
  ])('refuses %s, saying why', (_what, operations, reason) => {
    expect(() => applyPatch(appointment(), parsePatch(operations))).toThrow(reason);
  });
});

describe('parsePatch', () => {
  it.each([
    ['an object', { op: 'replace', path: '/status', value: 'x' }, /non-empty array/],
    ['an empty array', [], /non-empty array/],
    ['an unknown op', [{ op: 'merge', path: '/status' }], /operation 0: needs an op/],
    ['a replace with no value', [{ op: 'replace', path: '/status' }], /replace needs a value/],
    ['a copy with no from', [{ op: 'copy', path: '/status' }], /copy needs from/],
  ])('refuses %s', (_what, body, reason) => {
    expect(() => parsePatch(body)).toThrow(PatchError);
    expect(() => parsePatch(body)).toThrow(reason);
  });
});
