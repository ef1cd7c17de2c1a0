/**
 * The claim and its answers: the middleware claims the scoped key (waiting for a duplicate in
 * flight when so configured), and answers every outcome but `claimed` itself:
 * - `completed` → the stored response, replayed (draft-ietf-httpapi-idempotency-key-header §2.6);
 * - `mismatch` → 409, or 422 in the `ietf` profile (§2.2, §2.7; docs/spec.md §4.3 rule 6);
 * - `in-flight` → 409 with Retry-After (§2.6, §2.7);
 * - `scope-full` → 429 with Retry-After: this client holds too many live claims (RFC 6585 §4);
 * - `store-full` → 503 with Retry-After: the store holds too many (RFC 9110 §15.6.4).
 *
 * A store that fails on `claim`, or does not answer it within `storeTimeoutMs`, gives 503 with
 * Retry-After and nothing runs (fail closed: running the handler unprotected could repeat a
 * side effect). While the breaker knows the store is down, that answer comes at once.
 *
 * @module
 */
import { StoreGuardError, withDeadline } from '@api-blocks/core'
import { IdempotencyError } from './error.ts'
import type { ResolvedOptions } from './options.ts'
import type { PreparedRequest } from './prepare.ts'
import { refusal } from './refusal.ts'
import { replayResponse } from './replay.ts'
import type { IdempotencyClaimResult } from './store.ts'

/** What a claim that did not give the key to the caller answered. */
type ClaimRefused = Exclude<IdempotencyClaimResult, { state: 'claimed' }>

/**
 * @internal Claims the prepared request's key for `owner`. With `waitForInFlight`, a duplicate
 * in flight polls until the first ends, the wait times out or the client goes away.
 *
 * @throws {IdempotencyError} `STORE_UNAVAILABLE` (503) when the store fails.
 */
export async function claimKey(
  config: ResolvedOptions,
  request: Request,
  prepared: PreparedRequest,
  owner: string,
  started: number,
): Promise<IdempotencyClaimResult> {
  let result = await claimOnce(config, prepared, owner)
  const wait = config.waitForInFlight
  while (
    result.state === 'in-flight' &&
    wait !== undefined &&
    config.clock() + wait.pollMs <= started + wait.timeoutMs &&
    !request.signal.aborted
  ) {
    await config.sleep(wait.pollMs)
    result = await claimOnce(config, prepared, owner)
  }
  return result
}

async function claimOnce(
  config: ResolvedOptions,
  prepared: PreparedRequest,
  owner: string,
): Promise<IdempotencyClaimResult> {
  const { storeKey } = prepared
  const { store, storeGuard } = config
  let pending: Promise<IdempotencyClaimResult> | undefined
  try {
    // Within storeTimeoutMs, and not at all while the breaker knows the store is down.
    return await storeGuard.run(
      () =>
        (pending = store.claim(storeKey, {
          fingerprint: prepared.fingerprint,
          owner,
          leaseMs: config.leaseMs,
          now: config.clock(),
          scope: prepared.scope,
        })),
    )
  } catch (error) {
    // A claim that lands after the deadline holds the key for nothing: the client was told
    // 503 and will retry, and must not then be refused as in flight until the lease ends.
    if (pending !== undefined && error instanceof StoreGuardError) {
      pending.then(
        (late) => {
          if (late.state === 'claimed') void releaseLate(config, storeKey, owner)
        },
        () => {},
      )
    }
    config.emit?.({ type: 'store-error', storeKey, operation: 'claim', error })
    throw new IdempotencyError(
      'STORE_UNAVAILABLE',
      'The idempotency store is unavailable; the request was not processed. Retry later.',
      // RFC 9110 §10.2.3: when the breaker lets the store be tried again (at least 1 s).
      { cause: error, retryAfter: storeGuard.retryAfterSeconds() },
    )
  }
}

/** Releases a claim that landed after its request was answered 503; never throws. */
async function releaseLate(
  config: ResolvedOptions,
  storeKey: string,
  owner: string,
): Promise<void> {
  try {
    await withDeadline(config.store.release(storeKey, owner), config.storeTimeoutMs)
  } catch (error) {
    // The claim stays until its lease ends; then a retry executes.
    config.emit?.({ type: 'store-error', storeKey, operation: 'release', error })
  }
}

/** @internal The answer to a claim the caller did not get: a replay, or a refusal. */
export function answerClaim(
  config: ResolvedOptions,
  request: Request,
  storeKey: string,
  result: ClaimRefused,
  started: number,
): Response {
  const { clock, emit } = config
  switch (result.state) {
    case 'completed':
      // Draft §2.6: a duplicate of a completed request gets its result.
      emit?.({ type: 'replayed', storeKey, status: result.response.status })
      return replayResponse(result.response)
    case 'mismatch':
      // Draft §2.2: a key MUST NOT be reused with another payload; §2.7 answers 422,
      // docs/spec.md §4.3 rule 6 answers 409.
      emit?.({ type: 'mismatch', storeKey })
      return refusal(
        config,
        new IdempotencyError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was already used with a different request (method, route or body).',
          config.mismatchStatus === undefined ? {} : { status: config.mismatchStatus },
        ),
        request,
      )
    case 'in-flight': {
      // Draft §2.6: a concurrent duplicate MUST get a conflict error; §2.7: 409.
      emit?.({ type: 'in-flight', storeKey, waitedMs: clock() - started })
      const leaseLeft = Math.ceil((result.leaseExpiresAt - clock()) / 1000)
      const retryAfter = Math.max(1, Math.min(config.retryAfterSeconds, leaseLeft))
      return refusal(
        config,
        new IdempotencyError(
          'IDEMPOTENCY_KEY_IN_FLIGHT',
          'A request with this Idempotency-Key is still being processed.',
          { retryAfter },
        ),
        request,
      )
    }
    case 'scope-full':
      // The client's own flood: it is refused, and no other client's key is touched.
      emit?.({ type: 'rejected', code: 'IDEMPOTENCY_SCOPE_FULL' })
      return refusal(
        config,
        new IdempotencyError(
          'IDEMPOTENCY_SCOPE_FULL',
          'Too many requests with an Idempotency-Key are in progress for this client. Retry later.',
          { retryAfter: config.retryAfterSeconds },
        ),
        request,
      )
    case 'store-full':
      emit?.({ type: 'rejected', code: 'STORE_FULL' })
      return refusal(
        config,
        new IdempotencyError(
          'STORE_FULL',
          'Too many requests with an Idempotency-Key are in progress. Retry later.',
          { retryAfter: config.retryAfterSeconds },
        ),
        request,
      )
  }
}
