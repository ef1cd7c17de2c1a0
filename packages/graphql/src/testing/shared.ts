/**
 * What the conformance suites share: the registering helper, fresh random ids, the Promise check
 * and text that breaks naive quoting.
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
import { expect, test } from 'vitest'

/** Options every suite takes. */
export interface CommonOptions<S> {
  /** Called after each test with its store (close a client, delete its keys). */
  readonly cleanup?: ((store: S) => void | Promise<void>) | undefined
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number | undefined
  /** How many calls race in the concurrency tests (default 50, at least 2). */
  readonly concurrency?: number | undefined
}

/** Registers one test with a fresh store from `make` and a fresh random id, cleaned up after. */
export type Register<S> = (title: string, body: (store: S, run: string) => Promise<void>) => void

/** Checks the common options and makes the registering helper of a suite. */
export function registrar<S>(
  suite: string,
  make: () => S | Promise<S>,
  options: CommonOptions<S>,
): { it: Register<S>; concurrency: number } {
  const { cleanup, timeoutMs = 20_000, concurrency = 50 } = options
  if (!Number.isSafeInteger(concurrency) || concurrency < 2) {
    throw new RangeError(`${suite}: concurrency must be an integer >= 2`)
  }
  if (typeof make !== 'function') throw new TypeError(`${suite}: make must be a function`)
  const it: Register<S> = (title, body) =>
    test(
      title,
      async () => {
        const store = await make()
        try {
          await body(store, randomId())
        } finally {
          await cleanup?.(store)
        }
      },
      timeoutMs,
    )
  return { it, concurrency }
}

/** 16 random bytes as base64url: ids no other test (or run) meets on a shared server. */
function randomId(): string {
  return encodeBase64url(crypto.getRandomValues(new Uint8Array(16)))
}

/** Checks that `answer` is a Promise before it is awaited (the contract: always a Promise). */
export function promised<T>(answer: Promise<T>): Promise<T> {
  expect(answer).toBeInstanceOf(Promise)
  return answer
}

/** Text that breaks naive quoting: SQL, JSON, Lua patterns, non-ASCII and astral characters. */
export const AWKWARD = `O'Brien "quoted" \\ back\\slash; DROP TABLE x; -- %s %d [{}] $1 * ? ü ß 東京 🎉 \u2028 \t\n`
