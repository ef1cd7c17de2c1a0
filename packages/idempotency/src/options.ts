/**
 * The options of the idempotency middleware, their defaults and their validation, the storage
 * policy, and the events it reports.
 *
 * @module
 */
import type { StoreBreakerOptions, StoreGuard } from '@api-blocks/core'
import { storeGuard } from '@api-blocks/core'
import type { IdempotencyErrorCode } from './error.ts'
import type { FingerprintEncoding } from './fingerprint.ts'
import { defaultScope } from './scope.ts'
import type { IdempotencyStore } from './store.ts'

/**
 * Which answers follow which document where they differ:
 * - `spec` (default): a key reused with another request → 409, as docs/spec.md §4.3 rule 6 says;
 * - `ietf`: → 422, as draft-ietf-httpapi-idempotency-key-header §2.7 says.
 *
 * Both answer 400 for a missing key and 409 for a duplicate in flight.
 *
 * @example
 * ```ts
 * idempotency({ store, profile: 'ietf' }) // a reused key answers 422
 * ```
 */
export type IdempotencyProfile = 'spec' | 'ietf'

/**
 * What the middleware reports to `onEvent`, for metrics and logs.
 *
 * @example
 * ```ts
 * idempotency({
 *   store,
 *   onEvent: (event) => {
 *     if (event.type === 'lost') console.warn('idempotency lease too short for', event.storeKey)
 *     if (event.type === 'rejected') metrics.increment(`idempotency.rejected.${event.code}`)
 *   },
 * })
 * ```
 */
export type IdempotencyEvent =
  /** The claim was taken and the handler runs; `recoveryPoint` when it resumes a crashed run. */
  | {
      readonly type: 'executed'
      readonly storeKey: string
      readonly recoveryPoint: string | undefined
    }
  /** A stored response was replayed. */
  | { readonly type: 'replayed'; readonly storeKey: string; readonly status: number }
  /** The key was reused with another request (409, or 422 in the `ietf` profile). */
  | { readonly type: 'mismatch'; readonly storeKey: string }
  /** A duplicate arrived while the first was running (409), after waiting `waitedMs`. */
  | { readonly type: 'in-flight'; readonly storeKey: string; readonly waitedMs: number }
  /** The response was stored. */
  | {
      readonly type: 'stored'
      readonly storeKey: string
      readonly status: number
      readonly bytes: number
    }
  /**
   * The claim was given up so that a retry executes: the status is not stored by policy, the
   * handler threw, the body was over `maxStoredBytes`, or the body stream failed.
   */
  | {
      readonly type: 'released'
      readonly storeKey: string
      readonly reason: 'status' | 'thrown' | 'too-large' | 'body-error'
    }
  /**
   * `complete` or `release` found the claim gone: its lease ended (and perhaps another
   * execution took the key over). The response was sent but not stored. Frequent events mean
   * `leaseMs` is shorter than the handler's run time.
   */
  | { readonly type: 'lost'; readonly storeKey: string; readonly operation: 'complete' | 'release' }
  /** The store threw. On `claim` the request was answered 503 and nothing ran. */
  | {
      readonly type: 'store-error'
      readonly storeKey: string
      readonly operation: 'claim' | 'complete' | 'release' | 'checkpoint'
      readonly error: unknown
    }
  /**
   * The request was refused before any claim: a missing or bad key, a bad or large body (all
   * answered with their problem), or a request the middleware cannot scope (thrown: a 500).
   */
  | { readonly type: 'rejected'; readonly code: IdempotencyErrorCode }

/**
 * Options of `idempotency()`.
 *
 * @example
 * ```ts
 * const options: IdempotencyOptions = {
 *   store: new MemoryIdempotencyStore(),
 *   // The default scope: the principal, else the client address.
 *   methods: ['POST', 'PATCH'],
 *   required: true,
 *   waitForInFlight: { timeoutMs: 5_000, pollMs: 100 },
 * }
 * const middleware = idempotency(options)
 * ```
 */
export interface IdempotencyOptions {
  /** Where records live: `MemoryIdempotencyStore`, or a Redis or PostgreSQL store. */
  store: IdempotencyStore
  /**
   * Who the key belongs to. Keys are looked up within their scope only, so one client can
   * never replay another's response (see `deriveStoreKey`). Default: the request's principal
   * (`principalOf` of `@api-blocks/core`, as `principalKey` writes it), else its client address
   * (`clientAddressOf`, as `ip:<address>`); a keyed request with neither is refused as a server
   * misconfiguration (`IDEMPOTENCY_SCOPE_UNKNOWN`, thrown, a 500), never put in one scope shared
   * by every anonymous client. A fixed string (a single-tenant service whose clients trust each
   * other), or a function of the request, replaces that; a function that throws (say, a 401
   * problem) makes the middleware throw the same error.
   */
  scope?: string | ((request: Request) => string | Promise<string>)
  /** Whether a request without a key is refused with 400 (default `false`: it runs as is). */
  required?: boolean | ((request: Request) => boolean)
  /** The methods covered (default `['POST']`; add `PATCH`, `PUT` or `DELETE` as needed). */
  methods?: readonly string[]
  /** Default `spec` (409 for a reused key); `ietf` gives 422. */
  profile?: IdempotencyProfile
  /**
   * The route part of the fingerprint (default: the URL's path and query, `/v1/orders?x=1`).
   * A template such as `/v1/orders/:id` is stable across formatting, but it drops the id:
   * use one only where the id is in the body or the key is never reused across resources.
   */
  route?: (request: Request) => string
  /** Request header fields the fingerprint covers (default none), e.g. `['if-match']`. */
  fingerprintHeaders?: readonly string[]
  /** How fingerprints are written (default `base64url`). */
  fingerprintEncoding?: FingerprintEncoding
  /**
   * How long a claim holds the key, in milliseconds (default 60,000). Longer than the
   * handler's slowest run: when the lease ends, a retry executes again and the first
   * execution can no longer store its result. A crash frees the key after this, not after
   * the retention.
   */
  leaseMs?: number
  /** How long a completed record is kept and replayed, in milliseconds (default 24 h, docs/spec.md §8). */
  retentionMs?: number
  /** The largest request body read for the fingerprint, in bytes (default 1 MiB); over it: 413. */
  maxBodyBytes?: number
  /** The largest response body stored, in bytes (default 1 MiB); over it the claim is released. */
  maxStoredBytes?: number
  /** Which statuses are stored (default {@link defaultStorePolicy}); others release the claim. */
  storeStatus?: (status: number) => boolean
  /** More response header fields never stored (beside `NEVER_REPLAYED_HEADERS`). */
  omitHeaders?: readonly string[]
  /**
   * Instead of answering a duplicate in flight with 409 at once, poll every `pollMs` until
   * the first finishes (then replay its response, or run if it released the key) or
   * `timeoutMs` has passed (then 409). Default: answer at once.
   */
  waitForInFlight?: { readonly timeoutMs: number; readonly pollMs: number }
  /**
   * The longest wait for one store operation, in milliseconds (default 1,000). A claim the
   * store has not answered by then is a store failure: 503 `service-unavailable` with
   * `Retry-After`, and the handler does not run (if the claim lands later, it is released, so
   * that the retry is not refused as in flight). A `complete` or `release` that has not answered
   * by then is given up (reported as a `store-error`), and the response goes out.
   */
  storeTimeoutMs?: number
  /**
   * The circuit breaker in front of `claim` (default `{ failureThreshold: 5, cooldownMs: 1000
   * }`): after that many failed claims in a row, keyed requests are answered 503 at once,
   * without calling the store, for `cooldownMs`; then one request probes it. `false`: every
   * keyed request tries the store (and waits up to `storeTimeoutMs`).
   */
  storeBreaker?: StoreBreakerOptions | false
  /** The longest Retry-After of a 409 in flight, in seconds (default 1; at most the lease left). */
  retryAfterSeconds?: number
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Waits `ms` milliseconds, for `waitForInFlight` (default a timer). */
  sleep?: (ms: number) => Promise<void>
  /**
   * A new owner token per execution, unique among every process that shares the store
   * (default: a random UUID drawn once per middleware, then a counter).
   */
  generateOwner?: () => string
  /** The base URI problem-type slugs resolve against (see `toProblemResponse`). */
  problemBase?: string
  /** Observes what happens (see {@link IdempotencyEvent}). Errors thrown here are ignored. */
  onEvent?: (event: IdempotencyEvent) => void
}

/**
 * Error statuses stored by default: answers that a retry of the same request would get again.
 *
 * @example
 * ```ts
 * const storeStatus = (status: number) => defaultStorePolicy(status) || status === 403
 * DEFAULT_STORED_ERROR_STATUSES.includes(404) // true
 * ```
 */
export const DEFAULT_STORED_ERROR_STATUSES: readonly number[] = Object.freeze([400, 404, 410, 422])

/**
 * The default storage policy: store 2xx and the deterministic client errors of
 * {@link DEFAULT_STORED_ERROR_STATUSES} (400, 404, 410, 422). Never store what a retry may
 * change: 409 (a conflict may clear), 429 (a quota refills), 5xx (a fault may pass), 401/403
 * (credentials change), 412 (the resource moves on). Those release the claim so a retry
 * executes.
 *
 * @example
 * ```ts
 * idempotency({ store, storeStatus: (status) => defaultStorePolicy(status) || status === 403 })
 * ```
 */
export function defaultStorePolicy(status: number): boolean {
  return (status >= 200 && status <= 299) || DEFAULT_STORED_ERROR_STATUSES.includes(status)
}

/** The options with defaults applied (internal). */
export interface ResolvedOptions {
  store: IdempotencyStore
  scope: (request: Request) => string | Promise<string>
  required: (request: Request) => boolean
  methods: ReadonlySet<string>
  mismatchStatus: number | undefined
  route: (request: Request) => string
  fingerprintHeaders: readonly string[]
  fingerprintEncoding: FingerprintEncoding
  leaseMs: number
  retentionMs: number
  maxBodyBytes: number
  maxStoredBytes: number
  storeStatus: (status: number) => boolean
  omitHeaders: readonly string[]
  waitForInFlight: { readonly timeoutMs: number; readonly pollMs: number } | undefined
  retryAfterSeconds: number
  clock: () => number
  sleep: (ms: number) => Promise<void>
  generateOwner: () => string
  problemBase: string | undefined
  storeTimeoutMs: number
  /** The deadline and breaker of the claims (`storeTimeoutMs`, `storeBreaker`). */
  storeGuard: StoreGuard
  /** Calls `onEvent`; `undefined` without one, so `emit?.({ … })` builds no event for no one. */
  emit: ((event: IdempotencyEvent) => void) | undefined
}

function positive(name: string, value: number, integer = true): number {
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`,
    )
  }
  return value
}

/** Applies defaults and checks every number once, at setup (a `RangeError` on a bad one). */
export function resolveOptions(options: IdempotencyOptions): ResolvedOptions {
  const { store, scope = defaultScope, required = false, onEvent } = options
  if (typeof store?.claim !== 'function') throw new TypeError('idempotency(): `store` is required')
  if (typeof scope !== 'string' && typeof scope !== 'function') {
    throw new TypeError('idempotency(): `scope` is a string or a function of the request')
  }
  const wait = options.waitForInFlight
  const clock = options.clock ?? Date.now
  const storeTimeoutMs = positive('storeTimeoutMs', options.storeTimeoutMs ?? 1_000, false)
  return {
    store,
    scope: typeof scope === 'string' ? () => scope : scope,
    required: typeof required === 'boolean' ? () => required : required,
    methods: new Set((options.methods ?? ['POST']).map((method) => method.toUpperCase())),
    mismatchStatus: options.profile === 'ietf' ? 422 : undefined,
    route: options.route ?? pathAndQuery,
    fingerprintHeaders: (options.fingerprintHeaders ?? []).map((name) => name.toLowerCase()),
    fingerprintEncoding: options.fingerprintEncoding ?? 'base64url',
    leaseMs: positive('leaseMs', options.leaseMs ?? 60_000),
    retentionMs: positive('retentionMs', options.retentionMs ?? 24 * 60 * 60 * 1000),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 1024 * 1024),
    maxStoredBytes: positive('maxStoredBytes', options.maxStoredBytes ?? 1024 * 1024),
    storeStatus: options.storeStatus ?? defaultStorePolicy,
    omitHeaders: options.omitHeaders ?? [],
    waitForInFlight:
      wait === undefined
        ? undefined
        : {
            timeoutMs: positive('waitForInFlight.timeoutMs', wait.timeoutMs, false),
            pollMs: positive('waitForInFlight.pollMs', wait.pollMs, false),
          },
    retryAfterSeconds: positive('retryAfterSeconds', options.retryAfterSeconds ?? 1),
    clock,
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    generateOwner: options.generateOwner ?? ownerTokens(),
    problemBase: options.problemBase,
    storeTimeoutMs,
    storeGuard: storeGuard({
      timeoutMs: storeTimeoutMs,
      breaker: options.storeBreaker ?? {},
      clock,
    }),
    emit:
      onEvent === undefined
        ? undefined
        : (event) => {
            try {
              onEvent(event)
            } catch {
              // An observer must not change the answer.
            }
          },
  }
}

/**
 * The path and query of a request's URL, as `url.pathname + url.search` gives them. A Request's
 * URL is already serialised by the URL parser, so for http and https it is cut from the text
 * (no second parse): everything from the first `/` after the host, up to a fragment.
 */
function pathAndQuery(request: Request): string {
  const url = request.url
  if (url.startsWith('http://') || url.startsWith('https://')) {
    const path = url.indexOf('/', url.indexOf('//') + 2)
    const hash = url.indexOf('#')
    if (path !== -1 && (hash === -1 || hash > path)) {
      const end = hash === -1 ? url.length : hash
      // An empty query is no query (`search` is '' for `/?`); a path never holds a `?`.
      const query = url.indexOf('?', path)
      return url.slice(path, query === end - 1 ? query : end)
    }
  }
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

/**
 * Owner tokens: a random UUID drawn once, then a counter. Unique across processes (the UUID)
 * and executions (the counter) at a fraction of a UUID per request; the owner only fences
 * the store's writes and never leaves the server, so it need not be unpredictable.
 */
function ownerTokens(): () => string {
  // Drawn on first use, not when the middleware is made: Workers refuse random values outside
  // a request, and a startup snapshot would share one prefix between processes.
  let prefix: string | undefined
  let next = 0
  return () => {
    prefix ??= `${crypto.randomUUID()}.`
    return prefix + (next++).toString(36)
  }
}
