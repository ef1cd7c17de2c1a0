/**
 * The store contract of the authorisation server: interactions (a login and consent in
 * progress), authorization codes, grants (token families) and their tokens, and a replay cache.
 * The memory store (`memory-store.ts`) is the embedded default; `@api-blocks/redis` and
 * `@api-blocks/postgres` implement the same contract, and `@api-blocks/oauth/testing` checks any
 * implementation against it.
 *
 * Rules every implementation keeps:
 * - Every method returns a Promise, always.
 * - Time is the caller's: every method that decides expiry takes `now` (ms since the epoch) and
 *   never reads its own clock, so tests drive exact expiries.
 * - Nothing secret is stored in the clear: codes and tokens arrive as keyed hashes
 *   (`codeHash`, `tokenHash`, HMAC-SHA-256 under the server's token key, base64url). A leaked
 *   store yields no usable credential.
 * - The methods that decide a race are atomic: {@link OAuthStore.consumeCode},
 *   {@link OAuthStore.rotateRefresh}, {@link OAuthStore.takeInteraction}, {@link OAuthStore.issue}
 *   against {@link OAuthStore.revokeFamily}, and {@link OAuthStore.remember}. Of 50 concurrent
 *   calls on one code, one refresh token, one interaction or one key, exactly one wins.
 * - A family (grant) is revoked as a whole, by a flag every read checks, so revoking costs one
 *   write however many tokens the family issued, and a token of a revoked family is never
 *   active again.
 * - Reading never deletes what a later call must still tell apart: an expired token that
 *   `findToken` saw stays `expired` for `rotateRefresh` until a sweep or purge removes it (then
 *   it is `absent`).
 * - What a store must hold: ids, hashes, `familyId`, `jti` and replay-cache keys are
 *   base64url or VSCHAR (%x20-7E, RFC 6749 Appendix A); `state` and `nonce` are VSCHAR (the
 *   server refuses any other with `invalid_request`); every other text field (subjects, login
 *   hints, client ids, scopes, URIs) is any Unicode string without U+0000, which PostgreSQL
 *   `text` cannot hold. Quotes, backslashes and non-ASCII text round-trip unchanged.
 *
 * @module
 */

/**
 * A login and consent in progress: what `/authorize` accepted, kept until the host application
 * completes it (or it expires). Its `id` is the handle the host's pages carry.
 */
export interface InteractionRecord {
  /** Random, at least 128 bits, base64url. */
  readonly id: string
  readonly clientId: string
  /** The redirect URI, already matched exactly against the client's registered ones. */
  readonly redirectUri: string
  /** The scopes asked for, validated against the client's allowed scopes. */
  readonly scopes: readonly string[]
  /** The client's `state`, returned unchanged (RFC 6749 §4.1.2). */
  readonly state: string
  /** The OpenID Connect `nonce`, when `openid` was asked. */
  readonly nonce?: string | undefined
  /** The PKCE S256 challenge (RFC 7636 §4.2). */
  readonly codeChallenge: string
  /** The resource (audience) the tokens will be for (RFC 8707). */
  readonly resource: string
  /**
   * HMAC-SHA-256 under the token key, base64url, of the random value of the cookie that
   * `/authorize` set on the browser that started the interaction: only that browser can see,
   * complete or refuse it (RFC 9700 §4.7, login CSRF).
   */
  readonly bindingHash: string
  /**
   * The OpenID Connect `prompt` values asked for (`login`, `consent`, `select_account`), when
   * any (OpenID Connect Core §3.1.2.1).
   */
  readonly prompt?: readonly string[] | undefined
  /** The OpenID Connect `max_age`, seconds: how old the user's authentication may be. */
  readonly maxAge?: number | undefined
  /** The OpenID Connect `login_hint`, for the host's login page. */
  readonly loginHint?: string | undefined
  /** ms since the epoch. */
  readonly createdAt: number
  /** ms since the epoch: after it the interaction is absent. */
  readonly expiresAt: number
}

/** An authorization code, stored by its hash until it expires (consumed or not). */
export interface CodeRecord {
  /** HMAC-SHA-256 of the code under the token key, base64url. */
  readonly codeHash: string
  readonly clientId: string
  readonly redirectUri: string
  /** The authenticated end user. */
  readonly subject: string
  /** The approved scopes: only these are bound to the tokens. */
  readonly scopes: readonly string[]
  readonly codeChallenge: string
  readonly nonce?: string | undefined
  /** When the user authenticated, seconds since the epoch (the ID token's `auth_time`). */
  readonly authTime: number
  readonly resource: string
  /**
   * The id of the family the code's tokens will belong to, chosen when the code is made, so a
   * replayed code can revoke what it issued (RFC 6749 §4.1.2) even while the first exchange is
   * still writing it.
   */
  readonly familyId: string
  /** ms since the epoch. */
  readonly expiresAt: number
}

/** What {@link OAuthStore.consumeCode} found. */
export type ConsumeCodeResult =
  /** The code was live and unused: this call consumed it, and no other call ever will. */
  | { readonly state: 'consumed'; readonly code: CodeRecord }
  /** The code was consumed before: a replay (the caller revokes `code.familyId`). */
  | { readonly state: 'replayed'; readonly code: CodeRecord }
  /** Unknown or expired. */
  | { readonly state: 'absent' }

/**
 * A grant: what one authorization (a code exchange, or one client-credentials request) granted,
 * shared by every token issued from it, refresh rotations included. Revoking the family revokes
 * them all.
 */
export interface FamilyRecord {
  /** Random, at least 128 bits, base64url; a part of every opaque token of the family. */
  readonly id: string
  readonly clientId: string
  /** The end user, or `undefined` for a client acting for itself (client credentials). */
  readonly subject?: string | undefined
  /** The approved scopes. */
  readonly scopes: readonly string[]
  /** The audience of the access tokens (RFC 8707 resource). */
  readonly resource: string
  /** When the user authenticated, seconds since the epoch. */
  readonly authTime?: number | undefined
  /** ms since the epoch. */
  readonly createdAt: number
  /**
   * ms since the epoch: the end of the family's life. No token of the family outlives it, and
   * a revocation mark is kept until it.
   */
  readonly expiresAt: number
}

/** One issued token, stored by its hash. */
export interface TokenRecord {
  /**
   * HMAC-SHA-256 under the token key, base64url: of the token itself for an opaque token, of
   * its `jti` for a JWT access token.
   */
  readonly tokenHash: string
  readonly kind: 'access_token' | 'refresh_token'
  readonly familyId: string
  /** The token's own identifier (the JWT `jti`; opaque tokens have one too). */
  readonly jti: string
  /** ms since the epoch. */
  readonly issuedAt: number
  /** ms since the epoch; never after the family's `expiresAt`. */
  readonly expiresAt: number
  /**
   * The token's own scopes, when narrower than its family's (a refresh with a narrower `scope`,
   * RFC 6749 §6); `undefined` means the family's scopes.
   */
  readonly scopes?: readonly string[] | undefined
  /**
   * The key the token is bound to (RFC 7800 `cnf`): room for DPoP (`jkt`) and mutual TLS
   * (`x5t#S256`). `undefined` for a bearer token.
   */
  readonly confirmation?: Readonly<Record<string, string>> | undefined
}

/** An active token with the family it belongs to. */
export interface ActiveToken {
  readonly token: TokenRecord
  readonly family: FamilyRecord
}

/** Options of {@link OAuthStore.rotateRefresh}. */
export interface RotateRefreshOptions {
  /**
   * How long after its rotation a refresh token presented again counts as a harmless race (two
   * tabs refreshing at once) rather than theft: the call answers `reused-in-grace`, issues
   * nothing and revokes nothing, while `now < rotatedAt + graceMs`. 0 (the default of the
   * server) turns the window off entirely: even with a `now` before the rotation (another
   * instance's clock running behind) a rotated token presented again is `reused`.
   */
  readonly graceMs: number
}

/** What {@link OAuthStore.rotateRefresh} did. */
export type RotateRefreshResult =
  /** The old refresh token is now rotated (never usable again) and `next` is saved. */
  | { readonly state: 'rotated'; readonly family: FamilyRecord }
  /**
   * The token was rotated before and is presented again: the whole family is now revoked
   * (RFC 9700 §4.14.2), in the same atomic step, and `next` is not saved.
   */
  | { readonly state: 'reused'; readonly family: FamilyRecord }
  /** Presented again within the grace window: nothing saved, nothing revoked. */
  | { readonly state: 'reused-in-grace' }
  /** The token or its family was revoked. */
  | { readonly state: 'revoked' }
  /**
   * The token or its family expired (`absent` instead once a sweep or purge deleted it; never
   * because a read saw it expired).
   */
  | { readonly state: 'expired' }
  /** Unknown, or not a refresh token. */
  | { readonly state: 'absent' }

/**
 * Where the authorisation server keeps its state. See the module comment for the rules every
 * implementation keeps; `@api-blocks/oauth/testing` checks them.
 *
 * @example
 * ```ts
 * const store: OAuthStore = new MemoryOAuthStore({ maxRecords: 100_000 })
 * await store.saveCode(code)
 * const result = await store.consumeCode(code.codeHash, Date.now())
 * ```
 */
export interface OAuthStore {
  /**
   * Saves a new interaction (ids never repeat). A store that bounds its interactions may
   * reject, when it holds as many as it may, with an `OAuthError` whose `error` is
   * `temporarily_unavailable` (code `TEMPORARILY_UNAVAILABLE`): `/authorize` then answers 503
   * with `Retry-After`. Such a store never evicts codes or grants to make room for one.
   */
  saveInteraction(interaction: InteractionRecord): Promise<void>
  /** The interaction, or `undefined` when unknown, taken or expired. */
  findInteraction(id: string, now: number): Promise<InteractionRecord | undefined>
  /**
   * Removes and returns the interaction, atomically: of concurrent calls one gets it, the
   * others `undefined`. What completes an interaction calls this, so it completes once.
   */
  takeInteraction(id: string, now: number): Promise<InteractionRecord | undefined>

  /** Saves a new authorization code. */
  saveCode(code: CodeRecord): Promise<void>
  /**
   * Marks the code consumed, atomically, and says what it was. A consumed code is kept until
   * it expires, so a replay within its life is recognised as one.
   */
  consumeCode(codeHash: string, now: number): Promise<ConsumeCodeResult>

  /**
   * Saves `tokens` in `family`, creating the family when it does not exist (an existing one is
   * left as it is). Answers `'revoked'`, and saves nothing, when the family was revoked, even
   * before it existed (a replayed code revokes the family its first exchange is creating).
   * A family past both its `expiresAt` and its revocation mark's `retainUntil` is gone: the
   * mark no longer refuses, the call answers `'issued'` and makes the family anew. A token
   * whose `tokenHash` is already stored is left as it was (rotated or revoked included), and
   * the call still answers `'issued'`.
   */
  issue(
    family: FamilyRecord,
    tokens: readonly TokenRecord[],
    now: number,
  ): Promise<'issued' | 'revoked'>
  /**
   * The token and its family when the token is active: known, not expired, not revoked, not
   * rotated (a refresh token), and its family neither revoked nor expired. Else `undefined`.
   */
  findToken(familyId: string, tokenHash: string, now: number): Promise<ActiveToken | undefined>
  /**
   * The compare-and-set of refresh-token rotation: when `tokenHash` is an active refresh token
   * of `familyId`, marks it rotated and saves `next` (the new access and refresh tokens) in the
   * family, as one atomic step. Of concurrent calls with one token exactly one answers
   * `rotated`. A token rotated before answers `reused` and revokes the family in the same step,
   * or `reused-in-grace` within `options.graceMs` of its rotation (never with `graceMs` 0). A
   * token of `next` whose hash is already stored is left as it was.
   */
  rotateRefresh(
    familyId: string,
    tokenHash: string,
    next: readonly TokenRecord[],
    now: number,
    options: RotateRefreshOptions,
  ): Promise<RotateRefreshResult>
  /** Revokes one token (an access token); the rest of its family stays active. No-op when unknown. */
  revokeToken(familyId: string, tokenHash: string, now: number): Promise<void>
  /**
   * Revokes every token of the family, present and future, whether or not the family exists
   * yet. The mark is kept until the later of `retainUntil` (ms since the epoch; pass at least
   * the end of the family's life), any earlier mark's, and the family's own end; a reuse
   * detected by {@link OAuthStore.rotateRefresh} keeps it until the family's end. From then on
   * the mark is gone (see {@link OAuthStore.issue}).
   */
  revokeFamily(familyId: string, now: number, retainUntil: number): Promise<void>

  /**
   * The replay cache: `true` the first time `key` is seen (and remembers it until `expiresAt`),
   * `false` while it is remembered. Atomic. For one-time values: a DPoP proof's `jti`, a client
   * assertion's `jti`.
   */
  remember(key: string, expiresAt: number, now: number): Promise<boolean>
}
