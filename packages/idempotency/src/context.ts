/**
 * What a handler behind the middleware can learn about, and do with, its idempotent
 * execution: the key, and recovery points (Brandur Leach's "atomic phases": after a side
 * effect that cannot be repeated, record how far the request got, so that a retry after a
 * crash resumes there instead of repeating it).
 *
 * The context lives in the per-request context of `@api-blocks/core`, under this package's
 * own key (shared by duplicate installs of this package).
 *
 * @module
 */
import type { ContextKey } from '@api-blocks/core'
import { getContext, setContext, sharedContextKey } from '@api-blocks/core'

/**
 * The idempotent execution a request belongs to.
 *
 * @example
 * ```ts
 * const context: IdempotencyContext | undefined = idempotencyContext(request)
 * if (context?.recoveryPoint === undefined) await reserveStock(request)
 * await context?.checkpoint('reserved')
 * ```
 */
export interface IdempotencyContext {
  /** The client's key, unquoted. */
  readonly key: string
  /** The key the record is stored under (scope and key, hashed: see `deriveStoreKey`). */
  readonly storeKey: string
  /** The request's fingerprint. */
  readonly fingerprint: string
  /**
   * The last recovery point an earlier execution of this same request recorded before it
   * crashed or failed, or `undefined` on a first execution. Resume after it.
   */
  readonly recoveryPoint: string | undefined
  /**
   * Records that the request got past `recoveryPoint` (a charge was made, a message was
   * sent). From then on, if this execution fails or crashes, the record is not deleted: it is
   * kept for the retention period, bound to this request's fingerprint, and the next retry
   * of the same request runs with `recoveryPoint` set. Rejects with an `IdempotencyError`:
   * `IDEMPOTENCY_LEASE_LOST` (409) when another execution took the key over (stop: it is
   * running now), `STORE_UNAVAILABLE` (503) when the store failed.
   */
  checkpoint(recoveryPoint: string): Promise<void>
}

const CONTEXT: ContextKey<IdempotencyContext> = sharedContextKey('idempotency.context')

/**
 * The idempotent execution of a request the middleware passed to a handler, or `undefined`
 * for a request that did not go through it (no key, a method it does not cover). It travels
 * with the Request object: pass on the request the handler received (a middleware that must
 * build a new one copies the context over with `copyContext`).
 *
 * @example
 * ```ts
 * async function createPayment(request: Request): Promise<Response> {
 *   const context = idempotencyContext(request)
 *   if (context?.recoveryPoint !== 'charged') {
 *     await charge(request)
 *     await context?.checkpoint('charged') // a crash after this never charges twice
 *   }
 *   await sendReceipt(request)
 *   return Response.json({ ok: true }, { status: 201 })
 * }
 * ```
 */
export function idempotencyContext(request: Request): IdempotencyContext | undefined {
  return getContext(request, CONTEXT)
}

/** @internal Binds a context to the request handed to the handler (the middleware's side). */
export function bindIdempotencyContext(request: Request, context: IdempotencyContext): void {
  setContext(request, CONTEXT, context)
}
