/**
 * The embedded, in-process store: one `Map`, bounded in size, with no timers. The reference
 * service runs on it when no `REDIS_URL` is set; several processes need a shared store.
 *
 * @module
 */
import type { GcraCheck, GcraReply } from './gcra.ts'
import { gcraApply } from './gcra.ts'
import type { GcraPolicy } from './policy.ts'
import type { RateLimitStore } from './store.ts'

/**
 * Options of {@link MemoryRateLimitStore}.
 *
 * @example
 * ```ts
 * const options: MemoryRateLimitStoreOptions = { maxKeys: 50_000, onEvict: (key) => metrics.evicted++ }
 * ```
 */
export interface MemoryRateLimitStoreOptions {
  /**
   * The most keys held at once (default 100,000; roughly 200 bytes each, so about 20 MB).
   * When a new key arrives at the cap, one key is evicted (see {@link MemoryRateLimitStore}).
   */
  maxKeys?: number
  /**
   * Called with a key whose state was evicted while it still carried debt, so that its client
   * starts over with a full quota. Frequent calls mean `maxKeys` is too small. Errors thrown
   * here are ignored: an observer must not change the answer.
   */
  onEvict?: (key: string) => void
}

interface Entry {
  readonly key: string
  /** The policies the state lines up with (identity: the fast path of one limiter). */
  policies: readonly GcraPolicy[]
  /** `[tat0, frac0, tat1, frac1, ...]`, updated in place (see `gcraApply`). */
  state: number[]
  /** When every debt is paid: from then on the entry is the same as no entry. */
  expiresAt: number
  /** Checked since the eviction scan last passed it (the CLOCK reference bit). */
  used: boolean
}

const SWEEP_STEPS = 1

/**
 * An in-memory {@link RateLimitStore}. Atomic because each `consume` runs synchronously to
 * completion on the one JavaScript thread.
 *
 * Memory stays bounded two ways:
 * - **Expiry**: an entry whose debts are all paid (`now` past every policy's TAT) is worth
 *   nothing and is dropped by an incremental sweep that visits one entry per `consume` (so
 *   every entry is looked at once per pass over the map, without timers).
 * - **Capacity**: at `maxKeys`, inserting a new key evicts one key, chosen by the CLOCK
 *   (second-chance) approximation of least-recently-used: scanning from the oldest entry, a
 *   key whose debts are paid is dropped at once; a key checked since the scan last passed it
 *   loses that mark and goes to the back; the first key without the mark is evicted. A key
 *   seen only once is evicted before one that keeps coming back, so a flood of new keys cannot
 *   push out the active ones. An evicted key with unpaid debt is reported to `onEvict`; its
 *   client starts over with a full quota (eviction never causes a 429).
 *
 * @example
 * ```ts
 * const store = new MemoryRateLimitStore({ maxKeys: 10_000 })
 * const limiter = createRateLimiter({ store, policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }] })
 * ```
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #entries = new Map<string, Entry>()
  readonly #maxKeys: number
  readonly #onEvict: ((key: string) => void) | undefined
  #cursor: MapIterator<Entry> | undefined

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    const { maxKeys = 100_000, onEvict } = options
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw new RangeError('MemoryRateLimitStore: maxKeys must be a whole number >= 1')
    }
    this.#maxKeys = maxKeys
    this.#onEvict = onEvict
  }

  /** How many keys are held now (expired ones not yet swept included). */
  get size(): number {
    return this.#entries.size
  }

  /**
   * Runs the whole check synchronously, before anything else can touch the key (that is what
   * makes it atomic), and answers with a settled promise, as the store contract asks.
   */
  consume(check: GcraCheck): Promise<GcraReply> {
    try {
      return Promise.resolve(this.#consume(check))
    } catch (error) {
      // A check that is not one (no policies array): reject, never throw.
      return Promise.reject(error)
    }
  }

  reset(key: string): Promise<void> {
    this.#entries.delete(key)
    return Promise.resolve()
  }

  #consume(check: GcraCheck): GcraReply {
    const { key, policies, cost, now } = check
    this.#sweep(now)
    const entries = this.#entries
    // An entry past its expiry needs no special case: its debts compute to 0, and reusing it
    // spares the map a delete and an insert for a client that comes back.
    const entry = entries.get(key)
    const debts: number[] = new Array(policies.length)
    if (entry === undefined) {
      const state: number[] = []
      for (let i = 0; i < policies.length; i++) state.push(0, 0)
      const written = gcraApply(state, policies, cost, now, debts)
      if (written > 0) {
        if (entries.size >= this.#maxKeys) this.#evictOne(now)
        entries.set(key, { key, policies, state, expiresAt: written, used: false })
      }
      return { allowed: written >= 0, debts }
    }
    entry.used = true
    if (entry.policies === policies) {
      const written = gcraApply(entry.state, policies, cost, now, debts)
      if (written > 0) entry.expiresAt = written
      return { allowed: written >= 0, debts }
    }
    return { allowed: applyByName(entry, policies, cost, now, debts) >= 0, debts }
  }

  /** CLOCK: paid-up keys go first, marked keys get a second chance at the back. */
  #evictOne(now: number): void {
    const entries = this.#entries
    // Terminates: a marked entry is unmarked and re-appended, so the scan meets it again
    // unmarked at the latest after one pass.
    for (const [key, entry] of entries) {
      if (entry.expiresAt > now && entry.used) {
        entry.used = false
        entries.delete(key)
        entries.set(key, entry)
        continue
      }
      entries.delete(key)
      if (entry.expiresAt > now && this.#onEvict !== undefined) {
        try {
          this.#onEvict(key)
        } catch {
          // Ignored by contract: see MemoryRateLimitStoreOptions.onEvict.
        }
      }
      return
    }
  }

  /** Visits the next few entries in map order and drops those whose debts are all paid. */
  #sweep(now: number): void {
    for (let step = 0; step < SWEEP_STEPS; step++) {
      this.#cursor ??= this.#entries.values()
      const next = this.#cursor.next()
      if (next.done === true) {
        this.#cursor = undefined
        return
      }
      if (next.value.expiresAt <= now) this.#entries.delete(next.value.key)
    }
  }
}

/**
 * The slow path, when the entry was written with another policies array (another limiter
 * sharing the store and key): state is per policy name, so line it up by name, apply, and
 * write back, keeping the states of policies this check does not name.
 */
function applyByName(
  entry: Entry,
  policies: readonly GcraPolicy[],
  cost: number,
  now: number,
  debts: number[],
): number {
  const at = policies.map((policy) => entry.policies.findIndex((p) => p.name === policy.name))
  const state: number[] = []
  for (const j of at) {
    if (j === -1) state.push(0, 0)
    else state.push(entry.state[2 * j]!, entry.state[2 * j + 1]!)
  }
  const written = gcraApply(state, policies, cost, now, debts)
  if (written <= 0) return written
  const keptPolicies = [...entry.policies]
  policies.forEach((policy, i) => {
    let j = at[i]!
    if (j === -1) {
      j = keptPolicies.push(policy) - 1
    } else {
      keptPolicies[j] = policy
    }
    entry.state[2 * j] = state[2 * i]!
    entry.state[2 * j + 1] = state[2 * i + 1]!
  })
  entry.policies = keptPolicies
  // The TAT of a charged policy only moves forward, so the later of the two is right.
  entry.expiresAt = Math.max(entry.expiresAt, written)
  return written
}
