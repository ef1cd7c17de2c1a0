/**
 * The claim and its answers: the middleware claims the scoped key (waiting for a duplicate in
 * flight when so configured), and answers every outcome but `claimed` itself:
 * - `completed` → the stored response, replayed (draft-ietf-httpapi-idempotency-key-header §2.6);
 * - `mismatch` → 409, or 422 in the `ietf` profile (§2.2, §2.7; docs/spec.md §4.3 rule 6);
 * - `in-flight` → 409 with Retry-After (§2.6, §2.7).
 *
 * A store that fails on `claim` gives 503 and nothing runs (fail closed: running the handler
 * unprotected could repeat a side effect).
 *
 * @module
 */
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
  try {
    return await config.store.claim(storeKey, {
      fingerprint: prepared.fingerprint,
      owner,
      leaseMs: config.leaseMs,
      now: config.clock(),
      scope: prepared.scope,
    })
  } catch (error) {
    config.emit?.({ type: 'store-error', storeKey, operation: 'claim', error })
    throw new IdempotencyError(
      'STORE_UNAVAILABLE',
      'The idempotency store is unavailable; the request was not processed. Retry later.',
      { cause: error },
    )
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
  }
}
