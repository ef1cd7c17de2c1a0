/**
 * Where persisted documents live: registered by APQ (after validation), loaded from a build
 * tool's manifest (allow-list mode), looked up by id on every request that sends one.
 *
 * @module
 */

/** The longest id a store holds or a request may name: a `sha256:` id is 71 characters; a manifest's own ids are short. */
export const MAX_DOCUMENT_ID_LENGTH = 256

/**
 * A store of persisted GraphQL documents by id. Ids are `sha256:<64 lowercase hex>` for a
 * document's SHA-256 (APQ's `sha256Hash` and the GraphQL-over-HTTP `documentId` are mapped to
 * this form) or a manifest's own ids. Every method returns a Promise; a network store has its
 * own timeouts. Stores are bounded (a count or a byte budget, oldest or least used evicted).
 *
 * @example
 * ```ts
 * await store.set('sha256:ecf4edb4…', '{ __typename }')
 * const document = await store.get('sha256:ecf4edb4…') // '{ __typename }' or undefined
 * ```
 */
export interface PersistedDocumentStore {
  /** The document stored under `id`, or `undefined`. */
  get(id: string): Promise<string | undefined>
  /** Stores `document` under `id`; storing the same pair again is a no-op. */
  set(id: string, document: string): Promise<void>
}
