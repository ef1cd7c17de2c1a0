/**
 * The scopes of `MemoryIdempotencyStore`: each caller's records, so that what one caller does
 * to the store's capacity falls on its own records first. A scope keeps two lists threaded
 * through its records (no array or map of its own): its claims in the order they were taken,
 * and its completed records in the order they completed, oldest first, the ones eviction
 * takes. And a max-heap over scopes, for evicting from the scope that holds the most when the
 * whole store is full.
 *
 * @module
 */

/** A record as the scope lists see it. */
export interface ScopedRecord {
  scope: Scope
  older: ScopedRecord | undefined
  newer: ScopedRecord | undefined
}

/** A list of records threaded through their `older` / `newer` links. */
export class RecordList<R extends ScopedRecord> {
  oldest: R | undefined = undefined
  newest: R | undefined = undefined

  append(record: R): void {
    record.older = this.newest
    record.newer = undefined
    if (this.newest === undefined) this.oldest = record
    else this.newest.newer = record
    this.newest = record
  }

  remove(record: R): void {
    const { older, newer } = record
    if (older === undefined) this.oldest = newer as R | undefined
    else older.newer = newer
    if (newer === undefined) this.newest = older as R | undefined
    else newer.older = older
    record.older = undefined
    record.newer = undefined
  }
}

/** One scope: its records and what they hold. */
export class Scope {
  /** The claim's `scope`; `undefined` for claims that name none (bounded by the store only). */
  readonly name: string | undefined
  /** Records held, claims and completed ones. */
  records = 0
  /** Bytes the completed records' responses hold (bodies by their length, header text). */
  bytes = 0
  readonly claims: RecordList<ScopedRecord> = new RecordList()
  readonly completed: RecordList<ScopedRecord> = new RecordList()

  constructor(name: string | undefined) {
    this.name = name
  }
}

/**
 * The scopes with a completed record, the one of greatest `weight` on top: built once per
 * eviction pass (`O(n)`), then `O(log n)` per eviction.
 */
export class ScopeHeap {
  readonly #items: Scope[]
  readonly #weight: (scope: Scope) => number

  constructor(scopes: Iterable<Scope>, weight: (scope: Scope) => number) {
    this.#weight = weight
    this.#items = []
    for (const scope of scopes) if (scope.completed.oldest !== undefined) this.#items.push(scope)
    for (let index = (this.#items.length >> 1) - 1; index >= 0; index--) this.#down(index)
  }

  /** The scope of greatest weight that still has a completed record, or `undefined`. */
  top(): Scope | undefined {
    return this.#items[0]
  }

  /** After the top's weight went down (or it lost its last completed record). */
  settle(): void {
    const items = this.#items
    const top = items[0]
    if (top === undefined) return
    if (top.completed.oldest === undefined) {
      const last = items.pop() as Scope
      if (items.length === 0) return
      items[0] = last
    }
    this.#down(0)
  }

  #down(start: number): void {
    const items = this.#items
    const weight = this.#weight
    let index = start
    for (;;) {
      const left = 2 * index + 1
      if (left >= items.length) return
      const right = left + 1
      let child = left
      if (right < items.length && weight(items[right] as Scope) > weight(items[left] as Scope)) {
        child = right
      }
      if (weight(items[child] as Scope) <= weight(items[index] as Scope)) return
      const swap = items[index] as Scope
      items[index] = items[child] as Scope
      items[child] = swap
      index = child
    }
  }
}
