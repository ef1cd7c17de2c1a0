/**
 * `OAuthStore` on Redis: one hash per interaction, code, family and token, one Lua script per
 * method (see `internal/oauth-scripts.ts`), so every method is one `EVALSHA`, one round trip,
 * and atomic. A family and its tokens share the hash tag `{<familyId>}`, so one script touches
 * them together on a cluster too.
 *
 * @module
 */
import type {
  ActiveToken,
  CodeRecord,
  ConsumeCodeResult,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  RotateRefreshOptions,
  RotateRefreshResult,
  TokenRecord,
} from '@api-blocks/oauth'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import {
  CONSUME_CODE,
  FIND_INTERACTION,
  FIND_TOKEN,
  ISSUE,
  REMEMBER,
  REVOKE_FAMILY,
  REVOKE_TOKEN,
  ROTATE_REFRESH,
  SAVE_RECORD,
} from './internal/oauth-scripts.ts'
import type { LuaScript } from './internal/script.ts'
import { replyText, replyTexts, runScript } from './internal/script.ts'

/**
 * Options of {@link RedisOAuthStore}.
 *
 * @example
 * ```ts
 * const options: RedisOAuthStoreOptions = { client, prefix: 'orders-api:oauth:' }
 * const store = new RedisOAuthStore(options)
 * ```
 */
export interface RedisOAuthStoreOptions {
  /**
   * A connected client: `await createClient({ url }).connect()` from node-redis (a cluster or a
   * sentinel works too), or anything that implements {@link RedisScriptClient}. The store
   * never connects, reconnects or closes it.
   */
  client: RedisScriptClient
  /**
   * Put before every store key (default `api-blocks:oauth:`). Give each service (or each test
   * run) its own, when several share a Redis database. No braces (`{`, `}`): a family id in
   * braces is the cluster hash tag of a family's keys, and the constructor throws a
   * `TypeError` for a prefix with one.
   */
  prefix?: string
  /**
   * How long a record is kept past its logical end before Redis deletes it, in milliseconds
   * (default 60,000). The logical end is decided by the `now` each method is given; the grace
   * only lets an instance whose clock runs behind still see the record. Garbage collection
   * only: at least 0.
   */
  ttlGraceMs?: number
}

const DEFAULT_PREFIX = 'api-blocks:oauth:'

function time(value: number, name: string): string {
  if (!Number.isFinite(value)) throw new TypeError(`${name} must be a finite number, got ${value}`)
  return String(value)
}

/**
 * An {@link OAuthStore} on Redis. Each method is one Lua script run by `EVALSHA` (falling back
 * to `EVAL` once after a server lost its script cache): one round trip, and atomic, because
 * Redis runs a script to its end before serving any other command. Passes
 * `runOAuthStoreConformance` against a real server.
 *
 * - **Keys**: `<prefix>i:<id>` (interactions), `<prefix>c:<codeHash>` (codes),
 *   `<prefix>f:{<familyId>}` (a family and its revocation mark),
 *   `<prefix>t:{<familyId>}:<tokenHash>` (tokens), `<prefix>r:<key>` (the replay cache). The
 *   braces are a cluster hash tag: a family and its tokens are in one slot, so `issue`,
 *   `findToken` and `rotateRefresh` run on one node. Only hashes are stored, never a code or
 *   token.
 * - **Time** is the `now` of each call. A key's `PEXPIRE` is the logical time left plus
 *   `ttlGraceMs`, relative to `now`, and never shortened: garbage collection only, never
 *   earlier than the record's logical end. Consumed codes and rotated refresh tokens stay until
 *   they expire (replays are recognised); a revocation mark until its `retainUntil`. `saveCode`
 *   is given no `now`: it counts from the latest `now` the store was given (or the code's
 *   `authTime`, if later), which is never after the true time, so the key never ends early.
 * - **Failures** reject with a {@link RedisStoreError} whose `cause` is the client's error.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer } from '@api-blocks/oauth'
 * import { RedisOAuthStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const store = new RedisOAuthStore({ client })
 * const server = createAuthorizationServer({ issuer, clients, interactionUrl, store })
 * ```
 */
export class RedisOAuthStore implements OAuthStore {
  /** The client the store runs its scripts on. */
  readonly client: RedisScriptClient
  /** The prefix of every Redis key the store writes. */
  readonly prefix: string
  readonly #grace: string
  /** The latest `now` given to any method: what `saveCode` counts its time to live from. */
  #now = Number.NEGATIVE_INFINITY

  constructor(options: RedisOAuthStoreOptions) {
    const { client, prefix = DEFAULT_PREFIX, ttlGraceMs = 60_000 } = options
    if (typeof client?.evalSha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError('RedisOAuthStore: client must have evalSha and eval (node-redis)')
    }
    if (typeof prefix !== 'string') {
      throw new TypeError('RedisOAuthStore: prefix must be a string')
    }
    // A brace in the prefix would become the cluster hash tag of every key (Redis Cluster
    // hashes the first {…}), splitting a family from its tokens or piling all on one slot.
    if (prefix.includes('{') || prefix.includes('}')) {
      throw new TypeError('RedisOAuthStore: prefix must not contain { or } (cluster hash tags)')
    }
    if (!Number.isSafeInteger(ttlGraceMs) || ttlGraceMs < 0) {
      throw new RangeError('RedisOAuthStore: ttlGraceMs must be a whole number >= 0')
    }
    this.client = client
    this.prefix = prefix
    this.#grace = String(ttlGraceMs)
  }

  async saveInteraction(interaction: InteractionRecord): Promise<void> {
    const now = this.#see(interaction.createdAt, 'createdAt')
    await this.#run(
      'saveInteraction',
      SAVE_RECORD,
      [this.#interactionKey(interaction.id)],
      [JSON.stringify(interaction), time(interaction.expiresAt, 'expiresAt'), now, this.#grace],
    )
  }

  async findInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    return this.#interaction('findInteraction', id, now, '0')
  }

  async takeInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    return this.#interaction('takeInteraction', id, now, '1')
  }

  async saveCode(code: CodeRecord): Promise<void> {
    // No `now` here: the latest one seen, or the authentication time if later. Either is at
    // or before the true time, so the time to live is never shorter than the code's life.
    const from = Math.max(this.#now, code.authTime * 1000)
    await this.#run(
      'saveCode',
      SAVE_RECORD,
      [this.#codeKey(code.codeHash)],
      [
        JSON.stringify(code),
        time(code.expiresAt, 'expiresAt'),
        time(from, 'authTime'),
        this.#grace,
      ],
    )
  }

  async consumeCode(codeHash: string, now: number): Promise<ConsumeCodeResult> {
    const reply = replyTexts(
      await this.#run(
        'consumeCode',
        CONSUME_CODE,
        [this.#codeKey(codeHash)],
        [this.#see(now, 'now')],
      ),
    )
    const [state, json] = reply ?? []
    if (state === 'absent') return { state }
    if ((state === 'consumed' || state === 'replayed') && json !== undefined) {
      return { state, code: this.#decode<CodeRecord>('consumeCode', json) }
    }
    throw this.#unexpected('consumeCode', 'a reply of an unknown shape')
  }

  async issue(
    family: FamilyRecord,
    tokens: readonly TokenRecord[],
    now: number,
  ): Promise<'issued' | 'revoked'> {
    const keys = [this.#familyKey(family.id)]
    const args = [
      this.#see(now, 'now'),
      this.#grace,
      JSON.stringify(family),
      time(family.expiresAt, 'expiresAt'),
    ]
    this.#addTokens(family.id, tokens, keys, args)
    const reply = replyText(await this.#run('issue', ISSUE, keys, args))
    if (reply === 'issued' || reply === 'revoked') return reply
    throw this.#unexpected('issue', 'a reply of an unknown shape')
  }

  async findToken(
    familyId: string,
    tokenHash: string,
    now: number,
  ): Promise<ActiveToken | undefined> {
    const keys = [this.#familyKey(familyId), this.#tokenKey(familyId, tokenHash)]
    const reply = await this.#run('findToken', FIND_TOKEN, keys, [this.#see(now, 'now')])
    if (reply === null || reply === undefined) return undefined
    const [family, token] = replyTexts(reply) ?? []
    if (family === undefined || token === undefined) {
      throw this.#unexpected('findToken', 'a reply of an unknown shape')
    }
    return {
      token: this.#decode<TokenRecord>('findToken', token),
      family: this.#decode<FamilyRecord>('findToken', family),
    }
  }

  async rotateRefresh(
    familyId: string,
    tokenHash: string,
    next: readonly TokenRecord[],
    now: number,
    options: RotateRefreshOptions,
  ): Promise<RotateRefreshResult> {
    const keys = [this.#familyKey(familyId), this.#tokenKey(familyId, tokenHash)]
    const args = [this.#see(now, 'now'), time(options.graceMs, 'graceMs'), this.#grace]
    this.#addTokens(familyId, next, keys, args)
    const [state, json] =
      replyTexts(await this.#run('rotateRefresh', ROTATE_REFRESH, keys, args)) ?? []
    switch (state) {
      case 'rotated':
      case 'reused':
        if (json !== undefined) {
          return { state, family: this.#decode<FamilyRecord>('rotateRefresh', json) }
        }
        break
      case 'reused-in-grace':
      case 'revoked':
      case 'expired':
      case 'absent':
        return { state }
    }
    throw this.#unexpected('rotateRefresh', 'a reply of an unknown shape')
  }

  async revokeToken(familyId: string, tokenHash: string, now: number): Promise<void> {
    this.#see(now, 'now')
    await this.#run('revokeToken', REVOKE_TOKEN, [this.#tokenKey(familyId, tokenHash)], [])
  }

  async revokeFamily(familyId: string, now: number, retainUntil: number): Promise<void> {
    await this.#run(
      'revokeFamily',
      REVOKE_FAMILY,
      [this.#familyKey(familyId)],
      [this.#see(now, 'now'), time(retainUntil, 'retainUntil'), this.#grace],
    )
  }

  async remember(key: string, expiresAt: number, now: number): Promise<boolean> {
    const reply = await this.#run(
      'remember',
      REMEMBER,
      [`${this.prefix}r:${key}`],
      [this.#see(now, 'now'), time(expiresAt, 'expiresAt'), this.#grace],
    )
    if (reply === 1 || replyText(reply) === '1') return true
    if (reply === 0 || replyText(reply) === '0') return false
    throw this.#unexpected('remember', 'a reply of an unknown shape')
  }

  #interactionKey(id: string): string {
    return `${this.prefix}i:${id}`
  }

  #codeKey(codeHash: string): string {
    return `${this.prefix}c:${codeHash}`
  }

  #familyKey(familyId: string): string {
    return `${this.prefix}f:{${familyId}}`
  }

  #tokenKey(familyId: string, tokenHash: string): string {
    return `${this.prefix}t:{${familyId}}:${tokenHash}`
  }

  /** Checks `now`, remembers it when it is the latest, and answers it as the script's text. */
  #see(now: number, name: string): string {
    const text = time(now, name)
    if (now > this.#now) this.#now = now
    return text
  }

  /** Adds the keys and the arguments (JSON, expiresAt, kind) of `tokens` to a script call. */
  #addTokens(
    familyId: string,
    tokens: readonly TokenRecord[],
    keys: string[],
    args: string[],
  ): void {
    for (const token of tokens) {
      keys.push(this.#tokenKey(familyId, token.tokenHash))
      args.push(JSON.stringify(token), time(token.expiresAt, 'expiresAt'), token.kind)
    }
  }

  async #interaction(
    operation: string,
    id: string,
    now: number,
    take: '0' | '1',
  ): Promise<InteractionRecord | undefined> {
    const reply = await this.#run(
      operation,
      FIND_INTERACTION,
      [this.#interactionKey(id)],
      [this.#see(now, 'now'), take],
    )
    if (reply === null || reply === undefined) return undefined
    const json = replyText(reply)
    if (json === undefined) throw this.#unexpected(operation, 'a reply of an unknown shape')
    return this.#decode<InteractionRecord>(operation, json)
  }

  #decode<T>(operation: string, json: string): T {
    let value: unknown
    try {
      value = JSON.parse(json)
    } catch (cause) {
      throw this.#unexpected(operation, 'a stored record that does not parse', cause)
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.#unexpected(operation, 'a stored record that is not an object')
    }
    return value as T
  }

  async #run(
    operation: string,
    script: LuaScript,
    keys: string[],
    args: string[],
  ): Promise<unknown> {
    try {
      return await runScript(this.client, script, keys, args)
    } catch (cause) {
      throw new RedisStoreError(
        'COMMAND_FAILED',
        `oauth.${operation}`,
        `The Redis OAuth store could not run ${operation}.`,
        { cause },
      )
    }
  }

  #unexpected(operation: string, what: string, cause?: unknown): RedisStoreError {
    return new RedisStoreError(
      'UNEXPECTED_REPLY',
      `oauth.${operation}`,
      `The Redis OAuth store read ${what} (${operation}).`,
      cause === undefined ? undefined : { cause },
    )
  }
}
