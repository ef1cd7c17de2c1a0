/**
 * A bounded wait on a store, and a small circuit breaker in front of it. A block that calls a
 * shared store (Redis, PostgreSQL) must answer within a bounded time whatever the store does: a
 * server that is paused, overloaded or cut off by the network never answers, and a client
 * library's own timeouts do not always cover a command already written to the socket. The
 * block decides what a failure means (the rate limiter fails open, idempotency fails closed);
 * this module only makes sure the failure arrives in time, and, while the store is known to be
 * down, at once.
 *
 * The breaker has the usual three states. `closed`: every call runs, within the deadline;
 * `failureThreshold` failures in a row (a rejection or a timeout) open it. `open`: calls are
 * refused at once, without touching the store, for `cooldownMs`. Then `half-open`: one call
 * runs as a probe (the others are still refused); its success closes the breaker, its failure
 * opens it for another `cooldownMs`.
 *
 * @module
 */
import { ApiBlocksError } from './error.ts'

/**
 * Why a guarded store call failed without an answer of the store:
 * - `STORE_TIMEOUT`: the store did not answer within the deadline (its answer, if it comes, is
 *   ignored);
 * - `STORE_CIRCUIT_OPEN`: the breaker is open, the store was not called.
 *
 * @example
 * ```ts
 * const code: StoreGuardErrorCode = 'STORE_TIMEOUT'
 * metrics.increment(`store.${code}`)
 * ```
 */
export type StoreGuardErrorCode = 'STORE_TIMEOUT' | 'STORE_CIRCUIT_OPEN'

/**
 * A store call that ended without the store's answer. It answers 503 (the default problem of
 * `ApiBlocksError`, which shows nothing of the error); the blocks wrap it as the `cause` of their
 * own `STORE_UNAVAILABLE` error, so logs and `onEvent` observers see its `code`.
 *
 * @example
 * ```ts
 * try {
 *   await guard.run(() => store.consume(check))
 * } catch (error) {
 *   if (error instanceof StoreGuardError && error.code === 'STORE_CIRCUIT_OPEN') metrics.skipped++
 * }
 * ```
 */
export class StoreGuardError extends ApiBlocksError<StoreGuardErrorCode> {
  static override readonly kind: string = 'core.StoreGuardError'
}

/**
 * The circuit breaker's settings.
 *
 * @example
 * ```ts
 * const breaker: StoreBreakerOptions = { failureThreshold: 5, cooldownMs: 1_000 }
 * ```
 */
export interface StoreBreakerOptions {
  /** Failures in a row (rejections or timeouts) that open the breaker (default 5). */
  failureThreshold?: number
  /** How long an open breaker refuses calls before it lets one probe through, in ms (default 1,000). */
  cooldownMs?: number
}

/**
 * Options of {@link storeGuard}.
 *
 * @example
 * ```ts
 * const options: StoreGuardOptions = { timeoutMs: 250, breaker: { failureThreshold: 5, cooldownMs: 1_000 } }
 * ```
 */
export interface StoreGuardOptions {
  /** The longest wait for one store call, in milliseconds (a positive number). */
  timeoutMs: number
  /** The circuit breaker's settings; `false` for none (every call runs, within the deadline). */
  breaker?: StoreBreakerOptions | false
  /** Milliseconds since the epoch, for the breaker's cooldown (default `Date.now`). */
  clock?: () => number
}

/**
 * The state of a guard's breaker (see the module description).
 *
 * @example
 * ```ts
 * const state: StoreBreakerState = guard.state // 'closed' while the store answers
 * ```
 */
export type StoreBreakerState = 'closed' | 'open' | 'half-open'

/**
 * A deadline and a circuit breaker in front of one store, made by {@link storeGuard}.
 *
 * @example
 * ```ts
 * const guard = storeGuard({ timeoutMs: 250 })
 * const reply = await guard.run(() => store.consume(check))
 * ```
 */
export interface StoreGuard {
  /**
   * Runs `call` unless the breaker is open: resolves or rejects as it does within `timeoutMs`,
   * and rejects with a {@link StoreGuardError} otherwise (`STORE_TIMEOUT`, or
   * `STORE_CIRCUIT_OPEN` without calling it). A `call` that throws is a rejection.
   */
  run<T>(call: () => PromiseLike<T>): Promise<T>
  /** The breaker's state now (`closed` when it has none). */
  readonly state: StoreBreakerState
  /**
   * Whole seconds until the breaker lets a call through again, at least 1: what to tell a
   * client in `Retry-After` (RFC 9110 §10.2.3) after a failure.
   */
  retryAfterSeconds(): number
}

/**
 * Waits for `promise` at most `timeoutMs` milliseconds: settles as it does, or rejects with a
 * {@link StoreGuardError} `STORE_TIMEOUT`. A late rejection of `promise` is handled (never an
 * unhandled rejection); a late answer is dropped.
 *
 * @example
 * ```ts
 * const stored = await withDeadline(store.complete(key, owner, completion), 1_000)
 * ```
 */
export function withDeadline<T>(promise: PromiseLike<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    promise.then(
      (value) => {
        settled = true
        if (timer !== undefined) clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        settled = true
        if (timer !== undefined) clearTimeout(timer)
        reject(error)
      },
    )
    // A promise already settled (an in-memory store) has run the callbacks above by the time
    // this one runs: no timer for it. Arming and clearing one per call cost an in-memory rate
    // limit about 7 % of the service's throughput (bench: service); the timer of a store that
    // answers later starts one microtask late, which no deadline can tell.
    Promise.resolve().then(() => {
      if (settled) return
      timer = setTimeout(() => {
        reject(
          new StoreGuardError('STORE_TIMEOUT', `The store did not answer within ${timeoutMs} ms.`, {
            status: 503,
          }),
        )
      }, timeoutMs)
    })
  })
}

function positive(name: string, value: number, integer: boolean): number {
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`,
    )
  }
  return value
}

/**
 * Makes a {@link StoreGuard}: a deadline on every call and, unless `breaker` is `false`, a
 * circuit breaker that refuses calls at once while the store is known to be down. Throws a
 * `RangeError` for a `timeoutMs`, `failureThreshold` or `cooldownMs` that is not positive.
 *
 * @example
 * ```ts
 * const guard = storeGuard({ timeoutMs: 250, breaker: { failureThreshold: 5, cooldownMs: 1_000 } })
 * try {
 *   await guard.run(() => store.claim(key, claim))
 * } catch (error) {
 *   return new Response(null, { status: 503, headers: { 'retry-after': String(guard.retryAfterSeconds()) } })
 * }
 * ```
 */
export function storeGuard(options: StoreGuardOptions): StoreGuard {
  const timeoutMs = positive('timeoutMs', options.timeoutMs, false)
  const breaker = options.breaker ?? {}
  const clock = options.clock ?? Date.now
  const threshold =
    breaker === false ? Infinity : positive('failureThreshold', breaker.failureThreshold ?? 5, true)
  const cooldownMs =
    breaker === false ? 0 : positive('cooldownMs', breaker.cooldownMs ?? 1_000, false)

  let failures = 0
  let openedAt = 0
  let state: StoreBreakerState = 'closed'
  let probing = false

  const circuitOpen = () =>
    Promise.reject(
      new StoreGuardError(
        'STORE_CIRCUIT_OPEN',
        'The store failed repeatedly; it is not called for now.',
        {
          status: 503,
        },
      ),
    )
  const succeeded = (): void => {
    failures = 0
    state = 'closed'
  }
  const failed = (probe: boolean): void => {
    failures++
    if (probe || failures >= threshold) {
      state = 'open'
      openedAt = clock()
    }
  }

  return {
    run<T>(call: () => PromiseLike<T>): Promise<T> {
      let probe = false
      if (state !== 'closed') {
        if (probing || clock() < openedAt + cooldownMs) return circuitOpen()
        state = 'half-open'
        probing = probe = true
      }
      let pending: PromiseLike<T>
      try {
        pending = call()
      } catch (error) {
        pending = Promise.reject(error)
      }
      return withDeadline(pending, timeoutMs).then(
        (value) => {
          if (probe) probing = false
          succeeded()
          return value
        },
        (error: unknown) => {
          if (probe) probing = false
          failed(probe)
          throw error
        },
      )
    },
    get state(): StoreBreakerState {
      return state
    },
    retryAfterSeconds(): number {
      if (state === 'closed') return 1
      return Math.max(1, Math.ceil((openedAt + cooldownMs - clock()) / 1000))
    },
  }
}
