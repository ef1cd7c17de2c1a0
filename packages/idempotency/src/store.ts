/**
 * The store interface: one record per store key, moved through one state machine by four
 * atomic operations. Small on purpose, so that each operation is one round trip: one Lua
 * script (or `SET NX PX` plus a script) in Redis, one `INSERT … ON CONFLICT … DO UPDATE …
 * WHERE` or `UPDATE … WHERE` statement in PostgreSQL, one conditional put in DynamoDB.
 *
 * ```
 *            claim                          complete (owner, lease live)
 *   absent ───────────► live claim ─────────────────────────────────────► completed
 *    ▲  ▲                 │   │  ▲                                            │
 *    │  └── release, or ──┘   │  │ claim, same fingerprint                    │
 *    │      lease ends        │  │ (a new owner gets the recovery point)      │
 *    │      (no checkpoint)   │  │                                            │
 *    │     release, or lease  │  │                                            │
 *    │     ends, after a      ▼  │                                            │
 *    │     checkpoint       resumable                                         │
 *    │                         │                                              │
 *    └──── retention ends ─────┴────────────── retention ends ────────────────┘
 * ```
 *
 * @module
 */

/**
 * A response as stored and replayed: status, header fields and body, byte for byte.
 *
 * @example
 * ```ts
 * const stored: StoredResponse = {
 *   status: 201,
 *   headers: [['content-type', 'application/json'], ['location', '/v1/orders/42']],
 *   body: new TextEncoder().encode('{"id":42}'),
 * }
 * ```
 */
export interface StoredResponse {
  /** The HTTP status code. */
  readonly status: number
  /** Header fields in order, names lowercased, after the replay deny-list was applied. */
  readonly headers: readonly (readonly [name: string, value: string])[]
  /**
   * The body bytes, exactly as sent to the first client. It may be a view into a larger
   * buffer: read it through `byteOffset` and `byteLength` (or as the Uint8Array it is), never
   * through its whole `.buffer`.
   */
  readonly body: Uint8Array
}

/**
 * What {@link IdempotencyStore.claim} is asked.
 *
 * @example
 * ```ts
 * await store.claim(storeKey, { fingerprint, owner: crypto.randomUUID(), leaseMs: 60_000, now: Date.now(), scope: 'sub:alice' })
 * ```
 */
export interface IdempotencyClaim {
  /** The request's fingerprint (see `computeFingerprint`). */
  readonly fingerprint: string
  /** A token unique to this execution: the fence of `complete`, `checkpoint`, `release`. */
  readonly owner: string
  /** How long the claim holds the key against other executions, in milliseconds. */
  readonly leaseMs: number
  /** The middleware's clock, in milliseconds since the epoch. The store decides expiry by it. */
  readonly now: number
  /**
   * Whose key it is: the scope the store key was derived in (see `deriveStoreKey`; by default
   * `sub:<subject>`, `client:<id>` or `ip:<address>`), which the hashed key no longer shows. A
   * hint for stores that bound what one caller may hold, so that one client's flood never
   * evicts another's keys (`MemoryIdempotencyStore`'s `maxRecordsPerScope`); a store may
   * ignore it, and the answer to the claim must not depend on it otherwise. The middleware
   * always sends it; `undefined` when a caller does not say.
   */
  readonly scope?: string | undefined
}

/**
 * What {@link IdempotencyStore.claim} answers.
 *
 * @example
 * ```ts
 * const result: IdempotencyClaimResult = await store.claim(storeKey, claim)
 * switch (result.state) {
 *   case 'claimed': break // run the handler
 *   case 'completed': return replayResponse(result.response)
 *   case 'in-flight': break // 409 with Retry-After
 *   case 'mismatch': break // 409 (or 422)
 *   case 'scope-full': break // 429: this client holds too many live claims
 *   case 'store-full': break // 503: the store holds too many live claims
 * }
 * ```
 */
export type IdempotencyClaimResult =
  /**
   * The caller owns the key now: it was absent (or expired), or it held a resumable claim of
   * the same fingerprint whose lease had ended; then `recoveryPoint` is the last checkpoint
   * the earlier owner wrote.
   */
  | { readonly state: 'claimed'; readonly recoveryPoint?: string | undefined }
  /** Another owner holds a live lease on the key, for the same fingerprint. */
  | { readonly state: 'in-flight'; readonly leaseExpiresAt: number }
  /**
   * Nothing was stored: the claim's scope already holds as many live claims as the store
   * allows one scope (a store with per-scope bounds, such as the memory store's
   * `maxRecordsPerScope`). An answer, not a failure: that client is refused (429), no one else.
   */
  | { readonly state: 'scope-full' }
  /**
   * Nothing was stored: the store holds as many live claims as it can (a bounded store, such
   * as the memory store at `maxRecords` with nothing left to evict). The
   * server's own overload (503), and an answer, not a failure: it never opens the breaker.
   */
  | { readonly state: 'store-full' }
  /** The key completed, for the same fingerprint, within retention: replay `response`. */
  | { readonly state: 'completed'; readonly response: StoredResponse }
  /** The key is held (claimed, resumable or completed) for another fingerprint. */
  | { readonly state: 'mismatch' }

/**
 * What {@link IdempotencyStore.complete} stores.
 *
 * @example
 * ```ts
 * await store.complete(storeKey, owner, { response: stored, retentionMs: 24 * 60 * 60 * 1000, now: Date.now() })
 * ```
 */
export interface IdempotencyCompletion {
  /** The response to replay. */
  readonly response: StoredResponse
  /** How long the completed record lives, from `now` (default 24 h, docs/spec.md §8). */
  readonly retentionMs: number
  /** The middleware's clock. */
  readonly now: number
}

/**
 * What {@link IdempotencyStore.checkpoint} records.
 *
 * @example
 * ```ts
 * await store.checkpoint(storeKey, owner, { recoveryPoint: 'charged', retentionMs: 86_400_000, now: Date.now() })
 * ```
 */
export interface IdempotencyCheckpoint {
  /** The name of the step the handler finished (its side effect happened). */
  readonly recoveryPoint: string
  /** How long the record is kept from `now`, even if no one completes it. */
  readonly retentionMs: number
  /** The middleware's clock. */
  readonly now: number
}

/**
 * Where idempotency records live. Implementations pass `runIdempotencyStoreConformance` from
 * `@api-blocks/idempotency/testing`; `MemoryIdempotencyStore` is the embedded one.
 *
 * **The record** under a key has a state (`claimed` or `completed`), the fingerprint, the
 * owner token, `leaseExpiresAt`, and, once checkpointed or completed, `expiresAt` and the
 * recovery point or the response. Its logical state at time `now` is:
 * - *absent*: no record; or completed with `expiresAt <= now`; or claimed with
 *   `leaseExpiresAt <= now` and no recovery point (or `expiresAt <= now`);
 * - *live claim*: claimed with `leaseExpiresAt > now`;
 * - *resumable*: claimed with `leaseExpiresAt <= now`, a recovery point and `expiresAt > now`;
 * - *completed*: completed with `expiresAt > now`.
 *
 * **The contract**, for every operation:
 * - It is atomic per key: concurrent operations on one key behave as if run one after
 *   another, and each writes all of its change or none (a failed call leaves the record as
 *   it was). Fifty concurrent claims of one absent key give exactly one `claimed`.
 * - Time is the `now` argument, never the store's clock, and expiry is decided by comparing
 *   with it (`<= now` is expired). A physical TTL (Redis `PX`, a sweeper job) is only garbage
 *   collection and must not end a record before its logical end.
 * - Every operation returns a Promise, always, the embedded `MemoryIdempotencyStore`
 *   included: callers never test whether an answer is one. A store that cannot answer
 *   rejects that promise (it never throws from the call). The middleware then answers 503
 *   and runs nothing (fail closed). The conformance suite checks both.
 *
 * @example
 * ```ts
 * const store: IdempotencyStore = new MemoryIdempotencyStore()
 * const now = Date.now()
 * const result = await store.claim(key, { fingerprint, owner: crypto.randomUUID(), leaseMs: 60_000, now })
 * if (result.state === 'completed') console.log(result.response.status)
 * ```
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for `claim.owner`, or reports why not:
   *
   * | logical state   | same fingerprint                         | other fingerprint |
   * |-----------------|------------------------------------------|-------------------|
   * | absent          | write a live claim → `claimed`           | same              |
   * | live claim      | `in-flight` (its `leaseExpiresAt`)       | `mismatch`        |
   * | resumable       | take over: new owner and lease, keep the recovery point and `expiresAt` → `claimed` with `recoveryPoint` | `mismatch` |
   * | completed       | `completed` with the stored response     | `mismatch`        |
   *
   * A written claim has `leaseExpiresAt = now + leaseMs`, no recovery point and no response.
   */
  claim(key: string, claim: IdempotencyClaim): Promise<IdempotencyClaimResult>
  /**
   * Stores the response: if the record is a live claim of `owner`, it becomes completed with
   * `expiresAt = now + retentionMs` (the recovery point is dropped) and the call returns
   * `true`. Otherwise (another owner took the key over after the lease ended, the lease ended,
   * the record is gone) nothing changes and it returns `false`: a stale owner never
   * overwrites the record of the execution that replaced it.
   */
  complete(key: string, owner: string, completion: IdempotencyCompletion): Promise<boolean>
  /**
   * Gives the key up so that a retry executes: if the record is a claim of `owner` (its lease
   * live or not), it is deleted, or, when it carries a recovery point, its lease is ended
   * (`leaseExpiresAt = 0`) so it becomes resumable. Returns whether it found such a claim;
   * a record of another owner, or a completed record, is left alone. (A claim whose lease
   * ended without a checkpoint is already logically absent: a store whose TTL has removed it
   * answers `false`, one that still holds it may answer `true`; nothing observable differs.)
   */
  release(key: string, owner: string): Promise<boolean>
  /**
   * Records that a side effect happened: if the record is a live claim of `owner`, it gets
   * the recovery point and `expiresAt = now + retentionMs`, and the call returns `true`;
   * otherwise nothing changes and it returns `false`. A resumable record stays bound to its
   * fingerprint until `expiresAt`: a retry of the same request resumes, another is refused.
   */
  checkpoint(key: string, owner: string, checkpoint: IdempotencyCheckpoint): Promise<boolean>
}
