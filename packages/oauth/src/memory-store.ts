/**
 * The embedded, in-process {@link OAuthStore}: a few `Map`s, bounded in records, with no timers.
 * It is the authorisation server's default; several processes behind a load balancer need a
 * shared store (`@api-blocks/redis`, `@api-blocks/postgres`).
 *
 * @module
 */
import { OAuthError } from './error.ts'
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
} from './store.ts'

/**
 * Options of {@link MemoryOAuthStore}.
 *
 * @example
 * ```ts
 * const options: MemoryOAuthStoreOptions = { maxRecords: 50_000 }
 * const store = new MemoryOAuthStore(options)
 * ```
 */
export interface MemoryOAuthStoreOptions {
  /**
   * The most records held at once (default 100,000). Each interaction, code, family (or
   * revocation mark), token and remembered key counts one.
   */
  readonly maxRecords?: number
  /**
   * The most interactions (logins in progress) held at once, default a quarter of
   * `maxRecords`. At it, `saveInteraction` rejects (the server answers 503) rather than evict
   * codes or grants: a flood of `/authorize` requests cannot push users' grants out.
   */
  readonly maxInteractions?: number
}

/** How many rotated refresh tokens of one family are kept for reuse detection. */
const ROTATED_KEPT = 16

interface InteractionEntry {
  readonly interaction: InteractionRecord
  readonly seq: number
}

interface CodeEntry {
  readonly code: CodeRecord
  consumed: boolean
  readonly seq: number
}

interface TokenEntry {
  readonly token: TokenRecord
  /** When it was rotated (a refresh token), ms since the epoch. */
  rotatedAt: number | undefined
  revoked: boolean
}

/** A family, a revocation mark, or both, with the family's tokens. */
interface FamilyEntry {
  /** `undefined` for a mark made before the family existed. */
  family: FamilyRecord | undefined
  revoked: boolean
  /** Until when the revocation mark is kept (ms since the epoch); -Infinity without one. */
  markUntil: number
  readonly tokens: Map<string, TokenEntry>
  readonly seq: number
}

interface Timed {
  readonly expiresAt: number
  readonly seq: number
}

/** One unit eviction can drop: its end, its age, and how to drop it. */
interface Candidate {
  readonly end: number
  readonly seq: number
  readonly drop: () => void
}

const DEFAULT_MAX_RECORDS = 100_000

/** When a family entry (record and mark) may be forgotten. */
function familyEnd(entry: FamilyEntry): number {
  return Math.max(entry.family?.expiresAt ?? Number.NEGATIVE_INFINITY, entry.markUntil)
}

/**
 * An in-memory {@link OAuthStore}. Atomic because each operation runs synchronously to its end on
 * the one JavaScript thread; every operation answers a promise, as the contract asks (a failure
 * is a rejected promise, never a throw). Time is only ever the `now` an operation is given
 * (`saveInteraction` uses the interaction's `createdAt`, `saveCode` the latest `now` seen):
 * the store never reads a clock.
 *
 * Memory stays bounded by `maxRecords`, and never grows past it:
 * - **Expiry**: an interaction or code at or past its end (`expiresAt <= now`) is dropped when
 *   it is read (a token is not: a later `rotateRefresh` must still answer `expired`), and every
 *   record by a sweep over every record, run by a write once the earliest known end has passed
 *   and at least max(64, size / 16) writes came since the last sweep (amortised: a few record
 *   visits per write), and whenever the store is full.
 * - **Per family**: a rotation drops the family's expired access tokens, and a family keeps
 *   only its 16 most recent rotated refresh tokens (older ones then answer `absent`, which the
 *   contract allows), so a long-lived grant refreshed every few minutes stays a few records.
 * - **Interactions** have their own bound (`maxInteractions`, default a quarter of
 *   `maxRecords`): at it, or when the store is full, `saveInteraction` rejects with an
 *   {@link OAuthError} `temporarily_unavailable` and evicts nothing.
 * - **Capacity**: when any other write would pass `maxRecords` and the sweep did not free
 *   enough, the family being written gives up its own old records first (rotated, revoked and
 *   expired tokens); then the records that would expire soonest are evicted (the oldest first
 *   among equal ends) until a sixteenth of the capacity is free, so the pass is paid once per
 *   many writes. A family is evicted whole, with its tokens and revocation mark, so a token is
 *   never active without its family. A rotation never evicts the refresh token it rotates (a
 *   replay of it must still revoke the family): one that cannot fit its family, that token and
 *   the new tokens rejects with a `RangeError`. Short-lived records (codes, interactions, replay-cache
 *   keys) therefore go before long-lived grants.
 * - **What eviction costs**: an evicted interaction, code or token is absent (the user starts
 *   again; an evicted consumed code or rotated refresh token is no longer recognised as a replay,
 *   though it is refused all the same); an evicted replay-cache key may be accepted once more; an
 *   evicted revocation mark of a family that did not exist yet lets that family be issued. Size
 *   `maxRecords` so that live records fit: a full store is a sign it is too small.
 * - A single write larger than `maxRecords` (an `issue` with more tokens than the bound) rejects
 *   with a `RangeError`.
 *
 * @example
 * ```ts
 * const store = new MemoryOAuthStore({ maxRecords: 50_000 })
 * await store.remember('dpop-jti:3f2a', Date.now() + 60_000, Date.now()) // true
 * await store.remember('dpop-jti:3f2a', Date.now() + 60_000, Date.now()) // false: a replay
 * ```
 */
export class MemoryOAuthStore implements OAuthStore {
  readonly #max: number
  readonly #maxInteractions: number
  readonly #interactions = new Map<string, InteractionEntry>()
  readonly #codes = new Map<string, CodeEntry>()
  readonly #families = new Map<string, FamilyEntry>()
  readonly #remembered = new Map<string, Timed>()
  #size = 0
  #seq = 0
  /** The latest `now` given to any operation: what `saveCode` sweeps with. */
  #now = Number.NEGATIVE_INFINITY
  /** No record ends before this (ms since the epoch); a sweep before it would find nothing. */
  #nextEnd = Number.POSITIVE_INFINITY
  /** No interaction ends before this. */
  #nextInteractionEnd = Number.POSITIVE_INFINITY
  /** Writes since the last sweep. */
  #writes = 0

  constructor(options: MemoryOAuthStoreOptions = {}) {
    const { maxRecords = DEFAULT_MAX_RECORDS } = options
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1) {
      throw new RangeError('MemoryOAuthStore: maxRecords must be a positive integer')
    }
    const { maxInteractions = Math.max(1, Math.floor(maxRecords / 4)) } = options
    if (
      !Number.isSafeInteger(maxInteractions) ||
      maxInteractions < 1 ||
      maxInteractions > maxRecords
    ) {
      throw new RangeError('MemoryOAuthStore: maxInteractions must be 1 to maxRecords')
    }
    this.#max = maxRecords
    this.#maxInteractions = maxInteractions
  }

  /** How many records are held, expired ones not yet swept included. */
  get size(): number {
    return this.#size
  }

  /** The most records held at once. */
  get maxRecords(): number {
    return this.#max
  }

  async saveInteraction(interaction: InteractionRecord): Promise<void> {
    this.#see(interaction.createdAt)
    this.#write(this.#now, undefined)
    if (this.#interactions.has(interaction.id)) this.#dropInteraction(interaction.id)
    if (this.#interactions.size >= this.#maxInteractions && this.#now >= this.#nextInteractionEnd) {
      this.#sweepInteractions(this.#now)
    }
    if (this.#size + 1 > this.#max) this.#sweep(this.#now, undefined)
    // Never evicts for an interaction: codes and grants matter more than a new login.
    if (this.#interactions.size >= this.#maxInteractions || this.#size + 1 > this.#max) {
      throw new OAuthError(
        'temporarily_unavailable',
        'Too many sign-ins are in progress; try again in a moment.',
      )
    }
    this.#noteEnd(interaction.expiresAt)
    this.#nextInteractionEnd = Math.min(this.#nextInteractionEnd, interaction.expiresAt)
    this.#interactions.set(interaction.id, {
      interaction: { ...interaction, scopes: [...interaction.scopes] },
      seq: this.#seq++,
    })
    this.#size++
  }

  async findInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    this.#see(now)
    return this.#liveInteraction(id, now)
  }

  async takeInteraction(id: string, now: number): Promise<InteractionRecord | undefined> {
    this.#see(now)
    const interaction = this.#liveInteraction(id, now)
    if (interaction !== undefined) this.#dropInteraction(id)
    return interaction
  }

  async saveCode(code: CodeRecord): Promise<void> {
    this.#write(this.#now, undefined)
    if (this.#codes.has(code.codeHash)) this.#dropCode(code.codeHash)
    this.#makeRoom(1, this.#now, undefined)
    this.#noteEnd(code.expiresAt)
    this.#codes.set(code.codeHash, {
      code: { ...code, scopes: [...code.scopes] },
      consumed: false,
      seq: this.#seq++,
    })
    this.#size++
  }

  async consumeCode(codeHash: string, now: number): Promise<ConsumeCodeResult> {
    this.#see(now)
    const entry = this.#codes.get(codeHash)
    if (entry === undefined) return { state: 'absent' }
    if (entry.code.expiresAt <= now) {
      this.#dropCode(codeHash)
      return { state: 'absent' }
    }
    if (entry.consumed) return { state: 'replayed', code: entry.code }
    // Kept, consumed, until it expires: a replay within its life is recognised as one.
    entry.consumed = true
    return { state: 'consumed', code: entry.code }
  }

  async issue(
    family: FamilyRecord,
    tokens: readonly TokenRecord[],
    now: number,
  ): Promise<'issued' | 'revoked'> {
    this.#see(now)
    this.#write(now, family.id)
    let existing = this.#families.get(family.id)
    // Past the family's end and its mark's retainUntil, the entry is gone (the contract):
    // a revocation mark no longer refuses, and the family is made anew.
    if (existing !== undefined && familyEnd(existing) <= now) {
      this.#dropFamily(family.id)
      existing = undefined
    }
    if (existing?.revoked) return 'revoked'
    const records = tokens.length + (existing?.family === undefined ? 1 : 0)
    this.#makeRoom(records, now, family.id)
    this.#noteEnd(family.expiresAt)
    let entry = this.#families.get(family.id)
    if (entry === undefined) {
      entry = {
        family: undefined,
        revoked: false,
        markUntil: Number.NEGATIVE_INFINITY,
        tokens: new Map(),
        seq: this.#seq++,
      }
      this.#families.set(family.id, entry)
    }
    if (entry.family === undefined) {
      entry.family = { ...family, scopes: [...family.scopes] }
      this.#size++
    }
    this.#addTokens(entry, tokens)
    return 'issued'
  }

  async findToken(
    familyId: string,
    tokenHash: string,
    now: number,
  ): Promise<ActiveToken | undefined> {
    this.#see(now)
    const entry = this.#families.get(familyId)
    const family = entry?.family
    if (entry === undefined || family === undefined || entry.revoked) return undefined
    if (family.expiresAt <= now) return undefined
    const token = entry.tokens.get(tokenHash)
    if (token === undefined || token.revoked || token.rotatedAt !== undefined) return undefined
    // An expired token is left to the sweeps: deleted here, a later rotateRefresh would answer
    // absent where the contract says expired.
    if (token.token.expiresAt <= now) return undefined
    return { token: token.token, family }
  }

  async rotateRefresh(
    familyId: string,
    tokenHash: string,
    next: readonly TokenRecord[],
    now: number,
    options: RotateRefreshOptions,
  ): Promise<RotateRefreshResult> {
    this.#see(now)
    const entry = this.#families.get(familyId)
    const family = entry?.family
    const token = entry?.tokens.get(tokenHash)
    if (entry === undefined || family === undefined || token === undefined) {
      return { state: 'absent' }
    }
    if (token.token.kind !== 'refresh_token') return { state: 'absent' }
    if (family.expiresAt <= now || token.token.expiresAt <= now) return { state: 'expired' }
    // A rotated token presented again is a reuse even when an earlier reuse already revoked
    // the family: each presentation is reported as such.
    if (token.rotatedAt !== undefined) {
      // graceMs 0 turns the window off, whatever the caller's clock says: a `now` before the
      // rotation (another instance's clock running behind) is a reuse all the same.
      if (options.graceMs > 0 && now < token.rotatedAt + options.graceMs) {
        return { state: 'reused-in-grace' }
      }
      // RFC 9700 §4.14.2: a rotated refresh token presented again revokes the whole grant.
      entry.revoked = true
      entry.markUntil = Math.max(entry.markUntil, family.expiresAt)
      return { state: 'reused', family }
    }
    if (entry.revoked || token.revoked) return { state: 'revoked' }
    this.#write(now, familyId)
    // The presented token is never evicted to make room: a replay of it must still be
    // recognised (and revoke the family).
    this.#makeRoom(next.length, now, familyId, tokenHash)
    if (this.#size + next.length > this.#max) {
      throw new RangeError(
        `MemoryOAuthStore: a family, its refresh token and ${next.length} new tokens do not fit in maxRecords`,
      )
    }
    token.rotatedAt = now
    this.#trimFamily(entry, now)
    this.#addTokens(entry, next)
    return { state: 'rotated', family }
  }

  async revokeToken(familyId: string, tokenHash: string, now: number): Promise<void> {
    this.#see(now)
    const token = this.#families.get(familyId)?.tokens.get(tokenHash)
    if (token !== undefined) token.revoked = true
  }

  async revokeFamily(familyId: string, now: number, retainUntil: number): Promise<void> {
    this.#see(now)
    this.#write(now, familyId)
    this.#noteEnd(retainUntil)
    let entry = this.#families.get(familyId)
    if (entry === undefined) {
      this.#makeRoom(1, now, undefined)
      entry = {
        family: undefined,
        revoked: true,
        markUntil: retainUntil,
        tokens: new Map(),
        seq: this.#seq++,
      }
      this.#families.set(familyId, entry)
      this.#size++
      return
    }
    entry.revoked = true
    entry.markUntil = Math.max(entry.markUntil, retainUntil)
  }

  async remember(key: string, expiresAt: number, now: number): Promise<boolean> {
    this.#see(now)
    this.#write(now, undefined)
    this.#noteEnd(expiresAt)
    const seen = this.#remembered.get(key)
    if (seen !== undefined) {
      if (now < seen.expiresAt) return false
      this.#remembered.delete(key)
      this.#size--
    }
    this.#makeRoom(1, now, undefined)
    this.#remembered.set(key, { expiresAt, seq: this.#seq++ })
    this.#size++
    return true
  }

  #see(now: number): void {
    if (now > this.#now) this.#now = now
  }

  #noteEnd(end: number): void {
    if (end < this.#nextEnd) this.#nextEnd = end
  }

  /**
   * Counts a write, and sweeps once the earliest known end has passed and enough writes came
   * since the last sweep to pay for it (amortised), full or not.
   */
  #write(now: number, keep: string | undefined): void {
    this.#writes++
    if (now >= this.#nextEnd && this.#writes >= Math.max(64, this.#size >> 4)) {
      this.#sweep(now, keep)
    }
  }

  /**
   * After a rotation: drops the family's expired access tokens, and its rotated refresh tokens
   * beyond the 16 most recent (the store contract lets a store forget those).
   */
  #trimFamily(entry: FamilyEntry, now: number): void {
    const rotated: [string, number][] = []
    for (const [hash, token] of entry.tokens) {
      if (token.token.kind === 'access_token' && token.token.expiresAt <= now) {
        entry.tokens.delete(hash)
        this.#size--
      } else if (token.rotatedAt !== undefined) {
        rotated.push([hash, token.rotatedAt])
      }
    }
    if (rotated.length <= ROTATED_KEPT) return
    rotated.sort((a, b) => a[1] - b[1])
    for (const [hash] of rotated.slice(0, rotated.length - ROTATED_KEPT)) {
      entry.tokens.delete(hash)
      this.#size--
    }
  }

  #sweepInteractions(now: number): void {
    let next = Number.POSITIVE_INFINITY
    for (const [id, entry] of this.#interactions) {
      if (entry.interaction.expiresAt <= now) this.#dropInteraction(id)
      else next = Math.min(next, entry.interaction.expiresAt)
    }
    this.#nextInteractionEnd = next
  }

  #liveInteraction(id: string, now: number): InteractionRecord | undefined {
    const entry = this.#interactions.get(id)
    if (entry === undefined) return undefined
    if (entry.interaction.expiresAt <= now) {
      this.#dropInteraction(id)
      return undefined
    }
    return entry.interaction
  }

  #addTokens(entry: FamilyEntry, tokens: readonly TokenRecord[]): void {
    for (const token of tokens) {
      // A token hash already stored is left as it was (rotated or revoked included).
      if (entry.tokens.has(token.tokenHash)) continue
      this.#noteEnd(token.expiresAt)
      entry.tokens.set(token.tokenHash, { token, rotatedAt: undefined, revoked: false })
      this.#size++
    }
  }

  #dropInteraction(id: string): void {
    if (this.#interactions.delete(id)) this.#size--
  }

  #dropCode(codeHash: string): void {
    if (this.#codes.delete(codeHash)) this.#size--
  }

  #dropFamily(familyId: string): void {
    const entry = this.#families.get(familyId)
    if (entry === undefined) return
    this.#families.delete(familyId)
    this.#size -= this.#recordsOf(entry)
  }

  /** The records a family entry counts: the family or its mark (one), and each token. */
  #recordsOf(entry: FamilyEntry): number {
    return (entry.family !== undefined || entry.revoked ? 1 : 0) + entry.tokens.size
  }

  /**
   * Makes room for `count` more records: sweeps what ended at `now`, then evicts what ends
   * soonest, never the family `keep` (the one being written to), and never its token
   * `protect` (the refresh token being rotated).
   */
  #makeRoom(count: number, now: number, keep: string | undefined, protect?: string): void {
    if (count > this.#max) {
      throw new RangeError(`MemoryOAuthStore: ${count} records do not fit in maxRecords`)
    }
    if (this.#size + count <= this.#max) return
    this.#sweep(now, keep)
    if (this.#size + count <= this.#max) return
    // The writer's family gives up its own old records before anyone else's are touched.
    if (keep !== undefined) this.#evictOldTokensOf(keep, now, count)
    const target = this.#max - Math.floor(this.#max / 16)
    if (this.#size + count <= target) return
    const candidates = this.#candidates(keep)
    candidates.sort((a, b) => a.end - b.end || a.seq - b.seq)
    for (const candidate of candidates) {
      if (this.#size + count <= target) break
      candidate.drop()
    }
    // Only the family being written to is left: evict its expired-soonest tokens.
    if (this.#size + count > this.#max && keep !== undefined) {
      this.#evictTokensOf(keep, count, protect)
    }
  }

  /**
   * Drops every record whose end is at or before `now` (the family `keep` keeps its record,
   * not its expired tokens), and learns the earliest end of what is left.
   */
  #sweep(now: number, keep: string | undefined): void {
    this.#writes = 0
    let next = Number.POSITIVE_INFINITY
    this.#sweepInteractions(now)
    next = Math.min(next, this.#nextInteractionEnd)
    for (const [hash, entry] of this.#codes) {
      if (entry.code.expiresAt <= now) this.#dropCode(hash)
      else next = Math.min(next, entry.code.expiresAt)
    }
    for (const [key, seen] of this.#remembered) {
      if (seen.expiresAt <= now) {
        this.#remembered.delete(key)
        this.#size--
      } else {
        next = Math.min(next, seen.expiresAt)
      }
    }
    for (const [familyId, entry] of this.#families) {
      const end = familyEnd(entry)
      if (familyId !== keep && end <= now) {
        this.#dropFamily(familyId)
        continue
      }
      next = Math.min(next, end)
      for (const [hash, token] of entry.tokens) {
        if (token.token.expiresAt <= now) {
          entry.tokens.delete(hash)
          this.#size--
        } else {
          next = Math.min(next, token.token.expiresAt)
        }
      }
    }
    this.#nextEnd = next
  }

  /**
   * Drops the family's rotated, revoked and expired tokens, the oldest first, until `count`
   * more records fit. Its active tokens stay.
   */
  #evictOldTokensOf(familyId: string, now: number, count: number): void {
    const entry = this.#families.get(familyId)
    if (entry === undefined) return
    const old = [...entry.tokens]
      .filter(
        ([, token]) =>
          token.rotatedAt !== undefined || token.revoked || token.token.expiresAt <= now,
      )
      .sort(([, a], [, b]) => a.token.issuedAt - b.token.issuedAt)
    for (const [hash] of old) {
      if (this.#size + count <= this.#max) break
      entry.tokens.delete(hash)
      this.#size--
    }
  }

  #candidates(keep: string | undefined): Candidate[] {
    const candidates: Candidate[] = []
    for (const [id, { interaction, seq }] of this.#interactions) {
      candidates.push({ end: interaction.expiresAt, seq, drop: () => this.#dropInteraction(id) })
    }
    for (const [hash, entry] of this.#codes) {
      candidates.push({
        end: entry.code.expiresAt,
        seq: entry.seq,
        drop: () => this.#dropCode(hash),
      })
    }
    for (const [key, seen] of this.#remembered) {
      const drop = () => {
        if (this.#remembered.delete(key)) this.#size--
      }
      candidates.push({ end: seen.expiresAt, seq: seen.seq, drop })
    }
    for (const [familyId, entry] of this.#families) {
      if (familyId === keep) continue
      const drop = () => this.#dropFamily(familyId)
      candidates.push({ end: familyEnd(entry), seq: entry.seq, drop })
    }
    return candidates
  }

  /** Drops the family's tokens, the soonest to expire first, but `protect`, until `count` fit. */
  #evictTokensOf(familyId: string, count: number, protect: string | undefined): void {
    const entry = this.#families.get(familyId)
    if (entry === undefined) return
    const tokens = [...entry.tokens].sort(([, a], [, b]) => a.token.expiresAt - b.token.expiresAt)
    for (const [hash] of tokens) {
      if (this.#size + count <= this.#max) break
      if (hash === protect) continue
      entry.tokens.delete(hash)
      this.#size--
    }
  }
}
