/**
 * The receiver's dedup store contract (docs/spec.md §6 rule 1): a record per `webhook-id`,
 * kept 24 hours by default (the retry window), so a repeated delivery is answered 2xx without
 * running its side effects again. `MemoryDedupStore` is the embedded default;
 * `@api-blocks/redis` has `RedisDedupStore` and `@api-blocks/postgres` `PostgresDedupStore`;
 * all pass `runDedupStoreConformance` of `/testing`.
 *
 * @module
 */

/**
 * Remembers which webhook ids were handled. Every method returns a Promise.
 *
 * @example
 * ```ts
 * async function once(store: DedupStore, id: string, work: () => Promise<void>) {
 *   if (!(await store.claim(id, 86_400_000))) return // a repeat
 *   try {
 *     await work()
 *   } catch (error) {
 *     await store.release(id) // let a redelivery try again
 *     throw error
 *   }
 * }
 * ```
 */
export interface DedupStore {
  /**
   * Records `id` for `ttlMs` unless a record of it exists and has not expired: `true` when this
   * call recorded it (the first delivery), `false` for a repeat. Atomic: of concurrent claims
   * of one id exactly one gets `true`. Ids are 1 to 256 characters.
   */
  claim(id: string, ttlMs: number): Promise<boolean>
  /** Forgets `id`, so the next delivery of it is handled again (its handler failed). */
  release(id: string): Promise<void>
}
