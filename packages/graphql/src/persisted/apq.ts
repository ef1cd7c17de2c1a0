/**
 * Resolving a request's persisted document: Apollo's automatic persisted queries (APQ,
 * `extensions.persistedQuery`), the GraphQL-over-HTTP `documentId` (Appendix A, Persisted
 * Documents), and allow-list mode, where only registered documents run.
 *
 * @module
 */
import { sha256 } from '@api-blocks/core/crypto'
import type { GraphQLError } from 'graphql'
import { codedError } from '../error.ts'
import type { PersistedDocumentStore } from './store.ts'
import { MAX_DOCUMENT_ID_LENGTH } from './store.ts'

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * How a request's document was found. `register` is set for an APQ registration (hash and
 * query sent together): store it once the document has validated.
 *
 * @example
 * ```ts
 * const resolved: ResolvedDocument = { source: '{ __typename }', register: { id: 'sha256:…', source: '{ __typename }' } }
 * ```
 */
export interface ResolvedDocument {
  readonly source: string
  readonly register?: { readonly id: string; readonly source: string }
}

/**
 * Persisted-query settings resolved from the preparer's options.
 *
 * @example
 * ```ts
 * const config: PersistedConfig = { store: new MemoryPersistedDocumentStore(), mode: 'apq' }
 * ```
 */
export interface PersistedConfig {
  readonly store: PersistedDocumentStore
  readonly mode: 'apq' | 'allow-list'
}

/**
 * The lowercase hex SHA-256 of the UTF-8 of `text`: APQ's `sha256Hash` and the hex part of a
 * `sha256:` document id.
 *
 * @example
 * ```ts
 * await sha256Hex('{ __typename }') // 'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38'
 * ```
 */
export async function sha256Hex(text: string): Promise<string> {
  let hex = ''
  for (const byte of await sha256(text)) hex += byte.toString(16).padStart(2, '0')
  return hex
}

const notFound = (): GraphQLError =>
  // Apollo's exact message: Apollo Client retries with the full query on it (or on the code).
  codedError('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound')
const onlyPersisted = (): GraphQLError =>
  codedError('PERSISTED_QUERY_ONLY', 'Only registered persisted documents may be executed.')

/**
 * The APQ hash of `extensions.persistedQuery`, `undefined` when the request uses no APQ, or a
 * coded error (a version other than 1, a hash that is not 64 lowercase hex digits).
 */
function apqHash(extensions: unknown): string | undefined | GraphQLError {
  if (extensions === undefined || extensions === null) return undefined
  const persisted = (extensions as Record<string, unknown>)['persistedQuery']
  if (persisted === undefined || persisted === null) return undefined
  if (typeof persisted !== 'object' || Array.isArray(persisted)) {
    return codedError('BAD_REQUEST', 'extensions.persistedQuery must be an object.')
  }
  const { version, sha256Hash } = persisted as Record<string, unknown>
  // Apollo Server: any version but 1 is refused with 400 "Unsupported persisted query version".
  if (version !== 1) return codedError('BAD_REQUEST', 'Unsupported persisted query version.')
  if (typeof sha256Hash !== 'string' || !SHA256_HEX.test(sha256Hash)) {
    return codedError('BAD_REQUEST', 'persistedQuery.sha256Hash must be 64 lowercase hex digits.')
  }
  return sha256Hash
}

/**
 * Finds the document a request asks for. `persisted` false: persisted queries are off, and a
 * request that uses them gets `PERSISTED_QUERY_NOT_SUPPORTED`. Shapes are checked by the
 * caller (`query` and `documentId` are strings or absent).
 *
 * @example
 * ```ts
 * const resolved = await resolveDocument({ query: '{ __typename }' }, false)
 * ```
 */
export async function resolveDocument(
  request: { query?: string | undefined; documentId?: string | undefined; extensions?: unknown },
  persisted: PersistedConfig | false,
): Promise<ResolvedDocument | GraphQLError> {
  const { query, documentId } = request
  const hash = apqHash(request.extensions)
  if (typeof hash === 'object') return hash
  if (documentId !== undefined && (query !== undefined || hash !== undefined)) {
    return codedError('BAD_REQUEST', 'Send either documentId or a query, not both.')
  }
  if (persisted === false) {
    if (hash !== undefined || documentId !== undefined) {
      // Apollo's message and code: Apollo Client stops sending hashes when it sees them.
      return codedError('PERSISTED_QUERY_NOT_SUPPORTED', 'PersistedQueryNotSupported')
    }
    return query === undefined ? missingDocument() : { source: query }
  }
  const { store, mode } = persisted
  // GraphQL-over-HTTP Appendix A: `documentId` names the document; "sha256:<hex>" ids are the
  // SHA-256 of its UTF-8 source, others are the ids of a manifest.
  const id = hash !== undefined ? `sha256:${hash}` : documentId
  if (id === undefined) {
    // A full document: allow-list mode runs only registered ones.
    if (mode === 'allow-list') return onlyPersisted()
    return query === undefined ? missingDocument() : { source: query }
  }
  if (id.length > MAX_DOCUMENT_ID_LENGTH) {
    return codedError(
      'BAD_REQUEST',
      `documentId is longer than ${MAX_DOCUMENT_ID_LENGTH} characters.`,
    )
  }
  if (query !== undefined && mode === 'apq') {
    // APQ registration: the hash must be the query's, and the document is stored only after it
    // validated (Apollo writes its cache after the operation resolved).
    if ((await sha256Hex(query)) !== hash) {
      return codedError('PERSISTED_QUERY_HASH_MISMATCH', 'provided sha does not match query')
    }
    return { source: query, register: { id, source: query } }
  }
  const stored = await store.get(id)
  if (stored !== undefined) return { source: stored }
  return mode === 'allow-list' ? onlyPersisted() : notFound()
}

function missingDocument(): GraphQLError {
  return codedError('BAD_REQUEST', 'The request has no GraphQL document: send query or documentId.')
}
