/**
 * What the three conformance suites share: the registered-test helper, fresh random ids, and
 * the Promise check.
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
import { expect, test } from 'vitest'

/** Options every suite takes. */
export interface CommonOptions<S> {
  readonly cleanup?: ((store: S) => void | Promise<void>) | undefined
  readonly timeoutMs?: number | undefined
  readonly concurrency?: number | undefined
}

/** Registers one test with a fresh store from `make`, cleaned up after. */
export type Register<S, C = undefined> = (
  title: string,
  body: (store: S, context: C) => Promise<void>,
) => void

/** Checks the concurrency option and makes the registering helper of a suite. */
export function registrar<S, C>(
  suite: string,
  make: () => S | Promise<S>,
  options: CommonOptions<S>,
  context: () => C,
): { it: Register<S, C>; concurrency: number } {
  const { cleanup, timeoutMs = 20_000, concurrency = 50 } = options
  if (!Number.isSafeInteger(concurrency) || concurrency < 2) {
    throw new RangeError(`${suite}: concurrency must be an integer >= 2`)
  }
  const it: Register<S, C> = (title, body) =>
    test(
      title,
      async () => {
        const per = context()
        const store = await make()
        try {
          await body(store, per)
        } finally {
          await cleanup?.(store)
        }
      },
      timeoutMs,
    )
  return { it, concurrency }
}

/** 16 random bytes as base64url: ids no other test (or run) meets on a shared server. */
export function randomId(): string {
  return encodeBase64url(crypto.getRandomValues(new Uint8Array(16)))
}

/** Checks that `answer` is a Promise before it is awaited (the contract: always a Promise). */
export function promised<T>(answer: Promise<T>): Promise<T> {
  expect(answer).toBeInstanceOf(Promise)
  return answer
}

/** Text that breaks naive quoting: SQL, JSON, Lua patterns, non-ASCII and astral characters. */
export const AWKWARD = `O'Brien "quoted" \\ back\\slash; DROP TABLE x; -- %s %d [{}] $1 * ? ü ß 東京 🎉 \u2028 \t`
