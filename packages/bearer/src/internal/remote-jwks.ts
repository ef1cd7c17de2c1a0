/**
 * The keys of a JWKS URL (RFC 7517 §5), fetched here rather than by jose's
 * `createRemoteJWKSet` so that a failed fetch counts too: jose starts its unknown-`kid`
 * cooldown only after a successful fetch, so once the endpoint failed every token with a
 * made-up `kid` would cause a fetch.
 *
 * - The keys are used for `maxAgeMs` after the fetch that got them, then fetched again.
 * - Fetches are at least `cooldownMs` apart, counted from the last attempt, successful or not;
 *   one is in flight at a time and every caller waits for it.
 * - A token whose `kid` is not in the set causes a fetch (a rotated key) unless one was
 *   attempted within the cooldown: then it is refused from the keys at hand, "unknown key".
 * - While fetches fail, the last good keys are still used for {@link JWKS_STALE_GRACE_MS}
 *   past `maxAgeMs`; after that, and before any fetch ever succeeded, `JWKS_UNAVAILABLE`.
 *
 * Time comes from the verifier's clock.
 *
 * @module
 */
import { readStream } from '@api-blocks/core'
import type { JWTVerifyGetKey } from 'jose'
import { createLocalJWKSet, errors } from 'jose'
import { BearerError } from '../error.ts'
import type { BearerFetch } from '../options.ts'
import { JWKS_STALE_GRACE_MS } from '../options.ts'

/** @internal The largest JWKS document read, in bytes. A set of a few keys is a few KiB. */
export const MAX_JWKS_BYTES: number = 64 * 1024

/** @internal What a remote key set needs, checked by the caller. */
export interface RemoteJwksOptions {
  readonly url: string
  readonly fetch: BearerFetch | undefined
  readonly timeoutMs: number
  readonly cooldownMs: number
  readonly maxAgeMs: number
  readonly clock: () => number
}

function unavailable(cause: unknown): BearerError {
  if (cause instanceof BearerError) return cause
  return new BearerError('JWKS_UNAVAILABLE', 'The JWKS could not be fetched.', { cause })
}

// One GET of the JWKS: status 200, at most MAX_JWKS_BYTES of JSON that is a key set.
async function fetchKeySet(options: RemoteJwksOptions): Promise<JWTVerifyGetKey> {
  const signal = AbortSignal.timeout(options.timeoutMs)
  const fetchImpl = options.fetch ?? (globalThis.fetch as BearerFetch)
  const headers = new Headers({ accept: 'application/json, application/jwk-set+json' })
  // Never follow a redirect: the JWKS decides which tokens are genuine.
  const response = await fetchImpl(options.url, {
    method: 'GET',
    headers,
    signal,
    redirect: 'manual',
  })
  if (response.status !== 200 || response.body === null) {
    await response.body?.cancel().catch(() => undefined)
    throw new Error(`The JWKS endpoint answered ${response.status}.`)
  }
  const bytes = await readStream(response.body, MAX_JWKS_BYTES)
  const document: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  // Throws JWKSInvalid for anything but { keys: [objects] }.
  return createLocalJWKSet(document as Parameters<typeof createLocalJWKSet>[0])
}

/** @internal The key resolver of a JWKS URL (see the module's description). */
export function remoteJwks(options: RemoteJwksOptions): JWTVerifyGetKey {
  let local: JWTVerifyGetKey | undefined
  let fetchedAt = Number.NEGATIVE_INFINITY
  let attemptedAt = Number.NEGATIVE_INFINITY
  let pending: Promise<void> | undefined

  function refresh(): Promise<void> {
    if (pending === undefined) {
      attemptedAt = options.clock()
      pending = fetchKeySet(options)
        .then((set) => {
          local = set
          fetchedAt = options.clock()
        })
        .finally(() => {
          pending = undefined
        })
    }
    return pending
  }

  const coolingDown = (now: number): boolean =>
    pending === undefined && now - attemptedAt < options.cooldownMs
  const usable = (now: number): boolean =>
    local !== undefined && now - fetchedAt < options.maxAgeMs + JWKS_STALE_GRACE_MS

  // The keys to verify with at `now`: fresh ones, refetched ones, or stale ones within the grace.
  async function keysAt(now: number): Promise<JWTVerifyGetKey> {
    if (local !== undefined && now - fetchedAt < options.maxAgeMs) return local
    if (!coolingDown(now)) {
      try {
        await refresh()
        return local!
      } catch (cause) {
        if (usable(now)) return local!
        throw unavailable(cause)
      }
    }
    if (usable(now)) return local!
    throw new BearerError('JWKS_UNAVAILABLE', 'The JWKS could not be fetched recently.')
  }

  return async (header, token) => {
    const now = options.clock()
    const keys = await keysAt(now)
    try {
      return await keys(header, token)
    } catch (error) {
      // An unknown kid may be a key rotated in since the last fetch: fetch again, unless a
      // fetch was attempted within the cooldown (then the token names an unknown key).
      if (!(error instanceof errors.JWKSNoMatchingKey) || coolingDown(now)) throw error
      try {
        await refresh()
      } catch (cause) {
        throw unavailable(cause)
      }
      return local!(header, token)
    }
  }
}
