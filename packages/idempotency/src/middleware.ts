/**
 * The Fetch middleware: Idempotency-Key semantics in front of any handler
 * `(request) => Promise<Response>`, over an `IdempotencyStore`.
 *
 * For a covered method with a key, three steps, each in its own file:
 * 1. `prepare.ts`: validate the key, scope it, read the body (bounded), fingerprint the request;
 * 2. `claim.ts`: claim the scoped key atomically, and answer a claim not granted: the stored
 *    response replayed (same key, same request, completed); 409, or 422 in the `ietf` profile
 *    (same key, another request); 409 with Retry-After (the first is still running; or wait
 *    for it, as configured);
 * 3. `execution.ts`: run the handler on the same body, and store its response for replays when
 *    the storage policy says so (or release the claim, so that a retry runs).
 *
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 * @module
 */
import type { Handler, Middleware } from '@api-blocks/core'
import { answerClaim, claimKey } from './claim.ts'
import { IdempotencyError } from './error.ts'
import { execute } from './execution.ts'
import type { IdempotencyOptions, ResolvedOptions } from './options.ts'
import { resolveOptions } from './options.ts'
import type { PreparedRequest } from './prepare.ts'
import { prepareRequest } from './prepare.ts'
import { refusal } from './refusal.ts'
import type { IdempotencyClaimResult } from './store.ts'

/**
 * Makes the idempotency middleware. Place it after authentication (the default scope is the
 * principal) and before precondition evaluation and the handler (a replay must not be
 * re-evaluated: see docs/idempotency.md, "Conditional requests").
 *
 * Failure modes, all answered as `application/problem+json`:
 * - missing key where `required` → 400 `idempotency-key-missing`; bad key → 400
 *   `idempotency-key-invalid`; body over `maxBodyBytes` → 413; body stream broken (the client
 *   hung up) → 400. No claim is taken in any of these.
 * - the store throws on `claim` → 503 `service-unavailable`, the handler does not run (fail
 *   closed: running it unprotected could repeat a side effect).
 * - the handler throws → the claim is released and the error is rethrown for the adapter to
 *   answer as a problem; a retry executes.
 *
 * And two it throws, for the adapter to answer as a 500 (server faults, not the client's): a
 * keyed request it cannot scope (`IDEMPOTENCY_SCOPE_UNKNOWN`: no principal, no client address,
 * no `scope` option), and a body something read before it (`BODY_ALREADY_READ` of core).
 *
 * @example
 * ```ts
 * const store = new MemoryIdempotencyStore()
 * const withIdempotency = idempotency({ store })
 * const handler = (request: Request) => withIdempotency(request, createOrder)
 * ```
 */
export function idempotency(options: IdempotencyOptions): Middleware {
  const config = resolveOptions(options)
  // A request the middleware does not cover goes straight to `next`: no async frame, no
  // promise of its own (a rejection all the same when anything here throws).
  return (request, next) => {
    try {
      // Promise.resolve hands a native promise back as it is; anything else becomes one.
      if (!config.methods.has(request.method.toUpperCase())) return Promise.resolve(next(request))
      const field = request.headers.get('idempotency-key')
      if (field === null && !config.required(request)) return Promise.resolve(next(request))
      return handle(config, request, next, field)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

async function handle(
  config: ResolvedOptions,
  request: Request,
  next: Handler,
  field: string | null,
): Promise<Response> {
  let prepared: PreparedRequest
  try {
    prepared = await prepareRequest(config, request, field)
  } catch (error) {
    if (!(error instanceof IdempotencyError)) throw error
    config.emit?.({ type: 'rejected', code: error.code })
    // A 500 (a request it cannot scope) is the server's fault: thrown, for the adapter to
    // answer and the error boundary to log, never answered as if the client were wrong.
    if (error.status >= 500) throw error
    return refusal(config, error, request)
  }
  const owner = config.generateOwner()
  const started = config.clock()
  let result: IdempotencyClaimResult
  try {
    result = await claimKey(config, request, prepared, owner, started)
  } catch (error) {
    if (!(error instanceof IdempotencyError)) throw error
    return refusal(config, error, request)
  }
  if (result.state !== 'claimed') {
    return answerClaim(config, request, prepared.storeKey, result, started)
  }
  // Awaited rather than returned: adopting a returned promise costs two more turns of the
  // microtask queue.
  return await execute(config, request, next, prepared, owner, result.recoveryPoint)
}
