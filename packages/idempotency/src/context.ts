/**
 * What a handler behind the middleware can learn about, and do with, its idempotent
 * execution: the key, and recovery points (Brandur Leach's "atomic phases": after a side
 * effect that cannot be repeated, record how far the request got, so that a retry after a
 * crash resumes there instead of repeating it).
 *
 * @module
 */

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
   * `lease_lost` (409) when another execution took the key over (stop: it is running now),
   * `store_unavailable` (503) when the store failed.
   */
  checkpoint(recoveryPoint: string): Promise<void>
}

// A symbol-keyed slot on the Request (about 20 ns; a WeakMap entry costs about 450 ns and GC
// work), with a WeakMap for a Request that cannot take a property.
const SLOT: unique symbol = Symbol.for('api-blocks.idempotency.context') as never
type Carrier = Request & { [SLOT]?: IdempotencyContext }
const sealed = new WeakMap<Request, IdempotencyContext>()

/**
 * The idempotent execution of a request the middleware passed to a handler, or `undefined`
 * for a request that did not go through it (no key, a method it does not cover). Keyed by the
 * Request object: pass on the request the handler received, not a copy.
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
  return (request as Carrier)[SLOT] ?? sealed.get(request)
}

/** Binds a context to the request handed to the handler (internal to the middleware). */
export function bindIdempotencyContext(request: Request, context: IdempotencyContext): void {
  if (Object.isExtensible(request)) (request as Carrier)[SLOT] = context
  else sealed.set(request, context)
}
