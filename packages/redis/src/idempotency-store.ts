/**
 * `IdempotencyStore` on Redis: one hash per record, one Lua script per operation (see
 * `internal/idempotency-scripts.ts`), so every operation is one `EVALSHA`, one round trip, and
 * atomic per key.
 *
 * @module
 */
import type {
  IdempotencyCheckpoint,
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyCompletion,
  IdempotencyStore,
} from '@api-blocks/idempotency'
import { decodeStoredResponse, encodeStoredResponse } from '@api-blocks/idempotency'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { CHECKPOINT, CLAIM, COMPLETE, RELEASE } from './internal/idempotency-scripts.ts'
import type { LuaScript } from './internal/script.ts'
import { replyText, replyTexts, runScript } from './internal/script.ts'

/**
 * Options of {@link RedisIdempotencyStore}.
 *
 * @example
 * ```ts
 * const options: RedisIdempotencyStoreOptions = { client, prefix: 'orders-api:idempotency:' }
 * const store = new RedisIdempotencyStore(options)
 * ```
 */
export interface RedisIdempotencyStoreOptions {
  /**
   * A connected client: `await createClient({ url }).connect()` from node-redis (a cluster or a
   * sentinel works too), or anything that implements {@link RedisScriptClient}. The store
   * never connects, reconnects or closes it.
   */
  client: RedisScriptClient
  /**
   * Put before every store key (default `api-blocks:idempotency:`). Give each service (or each
   * test run) its own, when several share a Redis database.
   */
  prefix?: string
  /**
   * How long a record is kept past its logical end before Redis deletes it, in milliseconds
   * (default 60,000). The logical end is decided by the `now` each operation is given; the
   * grace only lets an instance whose clock runs behind still see the record. Garbage
   * collection only: at least 0.
   */
  ttlGraceMs?: number
}

const DEFAULT_PREFIX = 'api-blocks:idempotency:'

function time(value: number, name: string): string {
  if (!Number.isFinite(value)) throw new TypeError(`${name} must be a finite number, got ${value}`)
  return String(value)
}

/**
 * An {@link IdempotencyStore} on Redis. Each operation is one Lua script run by `EVALSHA`
 * (falling back to `EVAL` once after a server lost its script cache): one round trip, and
 * atomic, because Redis runs a script to its end before serving any other command. Passes
 * `runIdempotencyStoreConformance` against a real server.
 *
 * - **Time** is the `now` of each call. A key's `PEXPIRE` is the logical time left plus
 *   `ttlGraceMs`, relative to `now`: garbage collection only, never earlier than the record's
 *   logical end.
 * - **Bodies** are stored as `encodeStoredResponse` text (base64, written and read with Node's
 *   native `Buffer`), so any bytes round-trip.
 * - **Failures** reject with a {@link RedisStoreError} whose `cause` is the client's error; the
 *   middleware then answers 503 and runs nothing.
 *
 * @example
 * ```ts
 * import { idempotency } from '@api-blocks/idempotency'
 * import { RedisIdempotencyStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const withIdempotency = idempotency({ store: new RedisIdempotencyStore({ client }), scope: 'tenant-1' })
 * ```
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  /** The client the store runs its scripts on. */
  readonly client: RedisScriptClient
  /** The prefix of every Redis key the store writes. */
  readonly prefix: string
  readonly #grace: string

  constructor(options: RedisIdempotencyStoreOptions) {
    const { client, prefix = DEFAULT_PREFIX, ttlGraceMs = 60_000 } = options
    if (typeof client?.evalSha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError('RedisIdempotencyStore: client must have evalSha and eval (node-redis)')
    }
    if (typeof prefix !== 'string') {
      throw new TypeError('RedisIdempotencyStore: prefix must be a string')
    }
    if (!Number.isSafeInteger(ttlGraceMs) || ttlGraceMs < 0) {
      throw new RangeError('RedisIdempotencyStore: ttlGraceMs must be a whole number >= 0')
    }
    this.client = client
    this.prefix = prefix
    this.#grace = String(ttlGraceMs)
  }

  async claim(key: string, claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
    const { fingerprint, owner, leaseMs, now } = claim
    const reply = replyTexts(
      await this.#run('claim', CLAIM, key, [
        fingerprint,
        owner,
        time(now, 'now'),
        time(now + leaseMs, 'now + leaseMs'),
        this.#grace,
      ]),
    )
    const [state, value] = reply ?? []
    switch (state) {
      case 'claimed':
        return value === undefined ? { state } : { state, recoveryPoint: value }
      case 'mismatch':
        return { state }
      case 'in-flight': {
        const leaseExpiresAt = Number(value)
        if (value !== undefined && Number.isFinite(leaseExpiresAt)) return { state, leaseExpiresAt }
        break
      }
      case 'completed':
        if (value !== undefined) {
          try {
            return { state, response: decodeStoredResponse(value) }
          } catch (cause) {
            throw this.#unexpected('claim', 'a stored response that does not decode', cause)
          }
        }
        break
    }
    throw this.#unexpected('claim', 'a reply of an unknown shape')
  }

  async complete(key: string, owner: string, completion: IdempotencyCompletion): Promise<boolean> {
    const { response, retentionMs, now } = completion
    return this.#flag(
      'complete',
      await this.#run('complete', COMPLETE, key, [
        owner,
        time(now, 'now'),
        time(now + retentionMs, 'now + retentionMs'),
        encodeStoredResponse(response),
        this.#grace,
      ]),
    )
  }

  async release(key: string, owner: string): Promise<boolean> {
    return this.#flag('release', await this.#run('release', RELEASE, key, [owner]))
  }

  async checkpoint(
    key: string,
    owner: string,
    checkpoint: IdempotencyCheckpoint,
  ): Promise<boolean> {
    const { recoveryPoint, retentionMs, now } = checkpoint
    return this.#flag(
      'checkpoint',
      await this.#run('checkpoint', CHECKPOINT, key, [
        owner,
        time(now, 'now'),
        recoveryPoint,
        time(now + retentionMs, 'now + retentionMs'),
        this.#grace,
      ]),
    )
  }

  async #run(operation: string, script: LuaScript, key: string, args: string[]): Promise<unknown> {
    try {
      return await runScript(this.client, script, [this.prefix + key], args)
    } catch (cause) {
      throw new RedisStoreError(
        'COMMAND_FAILED',
        `idempotency.${operation}`,
        `The Redis idempotency store could not ${operation} a record.`,
        { cause },
      )
    }
  }

  #flag(operation: string, reply: unknown): boolean {
    const text = replyText(reply)
    if (text === '1') return true
    if (text === '0') return false
    throw this.#unexpected(operation, 'a reply of an unknown shape')
  }

  #unexpected(operation: string, what: string, cause?: unknown): RedisStoreError {
    return new RedisStoreError(
      'UNEXPECTED_REPLY',
      `idempotency.${operation}`,
      `The Redis idempotency store read ${what} (${operation}).`,
      cause === undefined ? undefined : { cause },
    )
  }
}
