/**
 * What a handler behind the middleware can learn about, and do with, its idempotent
 * execution: the key, recovery points (Brandur Leach's "atomic phases": after a side
 * effect that cannot be repeated, record how far the request got, so that a retry after a
 * crash resumes there instead of repeating it), and completion inside the handler's own
 * transaction (`completeWith`).
 *
 * The context lives in the per-request context of `@api-blocks/core`, under this package's
 * own key (shared by duplicate installs of this package).
 *
 * @module
 */
import type { ContextKey } from '@api-blocks/core'
import { getContext, setContext, sharedContextKey } from '@api-blocks/core'
import type { IdempotencyStore } from './store.ts'

/**
 * The idempotent execution a request belongs to.
 *
 * @example
 * ```ts
 * const context: IdempotencyContext | undefined = idempotencyContext(request)
 * if (context?.recoveryPoint === undefined) await reserveStock(request)
 * await context?.checkpoint('reserved')
 * ```
 *
 * @example
 * ```ts
 * // The order and the completed record commit in one transaction (pg and @api-blocks/postgres).
 * const client = await pool.connect()
 * try {
 *   await client.query('BEGIN')
 *   const order = await insertOrder(client, request)
 *   let response = Response.json(order, { status: 201 })
 *   const context = idempotencyContext(request)
 *   if (context) response = await context.completeWith(response, idempotencyStore.withDb(client))
 *   await client.query('COMMIT')
 *   return response
 * } catch (error) {
 *   await client.query('ROLLBACK')
 *   throw error
 * } finally {
 *   client.release()
 * }
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
  /**
   * Stores `response` as this key's result through `store`, from inside the handler, so that
   * the handler's own write and the completed record commit together: pass a store bound to
   * the handler's database transaction (`PostgresIdempotencyStore#withDb(client)` of
   * `@api-blocks/postgres`, on the same table as the middleware's store). A crash between the
   * write and the completion is then impossible: both commit, or neither does and a retry
   * executes once.
   *
   * The response is stored exactly as the middleware would store it (the same status policy,
   * omitted header fields and `maxStoredBytes`), under the same owner fence. Resolves with the
   * Response to send, which the handler returns as it is: the middleware sees that very
   * Response and does not store it again. When the policy does not store the response (its
   * status, its size), nothing is written and the middleware releases the claim after the
   * handler, as usual. If the transaction then fails, the handler throws or answers another
   * Response, and the middleware releases the claim, so a retry executes.
   *
   * Rejects with an `IdempotencyError`, for the caller to roll its transaction back:
   * `IDEMPOTENCY_LEASE_LOST` (409) when the claim is no longer this execution's (the lease
   * ended and another execution may have taken the key over), `STORE_UNAVAILABLE` (503) when
   * `store` failed; a TypeError when called twice.
   */
  completeWith(response: Response, store: IdempotencyStore): Promise<Response>
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
