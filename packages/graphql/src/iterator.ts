/**
 * Async iterators shared by the event-stream and WebSocket transports.
 *
 * @module
 */
import type { ExecutionResult } from 'graphql'

/**
 * Whether `value` is an async iterable: what graphql-js `subscribe` returns for a subscription
 * (a single `ExecutionResult` when it fails).
 *
 * @example
 * ```ts
 * if (isAsyncIterable(result)) for await (const event of result) send(event)
 * ```
 */
export const isAsyncIterable = (value: unknown): value is AsyncIterable<ExecutionResult> =>
  typeof Object(value)[Symbol.asyncIterator] === 'function'

/**
 * An async generator made of `next` and `end` (what `return`, `throw` and disposal do). Written
 * out rather than as an `async function*`, whose `return()` would wait behind a pending
 * `next()`: a client going away must end the source at once.
 *
 * @example
 * ```ts
 * const events = iteratorOf(() => source.next(), async () => ({ done: true, value: undefined }))
 * ```
 */
export function iteratorOf<T, R>(
  next: () => Promise<IteratorResult<T, R>>,
  end: () => Promise<IteratorResult<T, R>>,
): AsyncGenerator<T, R, undefined> {
  const generator: AsyncGenerator<T, R, undefined> = {
    next,
    return: end,
    async throw(error: unknown) {
      await end()
      throw error
    },
    [Symbol.asyncIterator]() {
      return generator
    },
    async [Symbol.asyncDispose]() {
      await end()
    },
  }
  return generator
}
