/**
 * A bounded cache whose entries each carry their own expiry: the least recently used entry
 * goes when it is full, an expired one when it is read.
 *
 * @module
 */

interface Entry<V> {
  readonly value: V
  readonly expiresAt: number
}

/** @internal At most `maxEntries` values, each until its `expiresAt` (ms since the epoch). */
export class ExpiringLru<V> {
  readonly #maxEntries: number
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recently
  // used entry first.
  readonly #entries = new Map<string, Entry<V>>()

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries
  }

  get size(): number {
    return this.#entries.size
  }

  /** The value of `key` while `now` is before its expiry; an expired entry is dropped. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    if (now >= entry.expiresAt) return undefined
    this.#entries.set(key, entry)
    return entry.value
  }

  /** Keeps `value` until `expiresAt`; a value already expired is not kept. */
  set(key: string, value: V, expiresAt: number, now: number): void {
    this.#entries.delete(key)
    if (this.#maxEntries === 0 || now >= expiresAt) return
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done === true) break
      this.#entries.delete(oldest.value)
    }
    this.#entries.set(key, { value, expiresAt })
  }
}
