import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { ApplicationFailure, defaultPayloadConverter, type FailureConverter } from '@temporalio/common';
import { failureTypes } from '../../src/contracts';
import { failureConverterPath } from '../../src/temporal/client';

const { failureConverter, READABLE_FAILURE_TYPES } = createRequire(import.meta.url)(failureConverterPath) as {
  failureConverter: FailureConverter;
  READABLE_FAILURE_TYPES: Set<string>;
};
const toFailure = (error: unknown) => failureConverter.errorToFailure(error, defaultPayloadConverter);

describe('the failure converter', () => {
  it('keeps readable exactly the failure types the workflows branch on', () => {
    expect([...READABLE_FAILURE_TYPES].sort()).toEqual(Object.values(failureTypes).sort());
  });

  it('encodes any other message, and keeps no stack anywhere', () => {
    const error = new Error('duplicate key value (card 4111111111111111) at /work/main/activities/x.ts');
    const failure = toFailure(error);
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(defaultPayloadConverter.fromPayload(failure.encodedAttributes!)).toEqual({
      message: error.message,
      stack_trace: '',
    });
    // Read back, it says what it said.
    expect(failureConverter.failureToError(failure, defaultPayloadConverter).message).toBe(error.message);
  });

  it('leaves a decline and a refusal readable, without stacks, their causes too', () => {
    const cause = new Error('socket hang up');
    const declined = ApplicationFailure.create({
      message: 'Card declined.',
      type: failureTypes.declined,
      nonRetryable: true,
      cause,
    });
    const failure = toFailure(declined);
    expect(failure).toMatchObject({ message: 'Card declined.', stackTrace: '' });
    expect(failure.cause).toMatchObject({ message: 'Encoded failure', stackTrace: '' });
    expect(
      toFailure(ApplicationFailure.create({ message: 'Not an ops action.', type: failureTypes.refused })),
    ).toMatchObject({ message: 'Not an ops action.', stackTrace: '' });
  });
});
