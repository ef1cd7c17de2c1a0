/**
 * Loading the persisted-document manifests that build tools write, for allow-list mode (or to
 * warm an APQ store).
 *
 * @module
 */
import { sha256Hex } from './apq.ts'
import type { PersistedDocumentStore } from './store.ts'

/** Apollo's `persisted-query-manifest.json` (`@apollo/generate-persisted-query-manifest`). */
interface ApolloManifest {
  readonly format: 'apollo-persisted-query-manifest'
  readonly version: 1
  readonly operations: readonly {
    readonly id: string
    readonly body: string
    readonly name?: string
    readonly type?: string
  }[]
}

/**
 * A manifest: Apollo's (`{ format: "apollo-persisted-query-manifest", version: 1, operations:
 * [{ id, body, name, type }] }`, ids the sha256 of the body) or a plain map from id to document
 * (Relay's `persisted_queries.json`, GraphQL Code Generator's `persisted-documents.json`).
 *
 * @example
 * ```ts
 * const manifest: PersistedManifest = { 'sha256:ecf4…': '{ __typename }' }
 * ```
 */
export type PersistedManifest = ApolloManifest | Readonly<Record<string, string>>

const HEX64 = /^[0-9a-f]{64}$/

/**
 * The store id of a manifest id: a bare 64-hex id (Apollo's, GraphQL Code Generator's
 * `sha256` hashes) becomes `sha256:<hex>`, so APQ hashes and `documentId`s find it; other ids
 * (`sha256:…`, Relay's MD5, custom ones) are kept as they are.
 */
function storeId(id: string): string {
  return HEX64.test(id) ? `sha256:${id}` : id
}

/**
 * Stores every document of `manifest` in `store`, checking each sha256 id against its
 * document (GraphQL-over-HTTP Appendix A: a `sha256:` id is the SHA-256 of the UTF-8 source).
 * Rejects with a `TypeError` naming the first entry that is malformed or whose hash does not
 * match, before storing anything. Resolves to the number of documents stored.
 *
 * @example
 * ```ts
 * import manifest from './persisted-query-manifest.json' with { type: 'json' }
 * const store = new MemoryPersistedDocumentStore()
 * await loadPersistedManifest(store, manifest)
 * const handler = createGraphQLHandler({ schema, persistedQueries: { store, mode: 'allow-list' } })
 * ```
 */
export async function loadPersistedManifest(
  store: PersistedDocumentStore,
  manifest: PersistedManifest,
): Promise<number> {
  const entries = manifestEntries(manifest)
  const checked: [string, string][] = []
  for (const [id, document] of entries) {
    const key = storeId(id)
    if (key.startsWith('sha256:') && (await sha256Hex(document)) !== key.slice(7)) {
      throw new TypeError(`Persisted manifest: the id ${id} is not the sha256 of its document`)
    }
    checked.push([key, document])
  }
  for (const [id, document] of checked) await store.set(id, document)
  return checked.length
}

function manifestEntries(manifest: unknown): [string, string][] {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new TypeError('Persisted manifest: expected a JSON object')
  }
  const record = manifest as Record<string, unknown>
  if ('format' in record) {
    if (record['format'] !== 'apollo-persisted-query-manifest' || record['version'] !== 1) {
      throw new TypeError(
        'Persisted manifest: only apollo-persisted-query-manifest version 1 is known',
      )
    }
    const operations = record['operations']
    if (!Array.isArray(operations))
      throw new TypeError('Persisted manifest: operations must be an array')
    return operations.map((operation: unknown, index) => {
      const { id, body } = (operation ?? {}) as Record<string, unknown>
      if (typeof id !== 'string' || typeof body !== 'string') {
        throw new TypeError(`Persisted manifest: operations[${index}] needs a string id and body`)
      }
      return [id, body]
    })
  }
  return Object.entries(record).map(([id, document]) => {
    if (typeof document !== 'string') {
      throw new TypeError(`Persisted manifest: the document of ${id} must be a string`)
    }
    return [id, document]
  })
}
