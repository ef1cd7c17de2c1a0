import { expect } from 'vitest'
import { BearerError } from '../src/error.ts'

/** The BearerError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<BearerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(BearerError)
  return error as BearerError
}
