/**
 * The PostgreSQL store of @api-blocks/graphql, on its own subpath so that the other stores of
 * this package need neither graphql nor @api-blocks/graphql installed:
 * `PostgresPersistedDocumentStore` (persisted queries shared by every instance; its table comes
 * with the package's migrations, `0006_graphql_persisted_documents`).
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite'
 * import { migrate } from '@api-blocks/postgres'
 * import { PostgresPersistedDocumentStore } from '@api-blocks/postgres/graphql'
 *
 * const db = new PGlite()
 * await migrate(db)
 * const documents = new PostgresPersistedDocumentStore({ db })
 * ```
 *
 * @module
 */

export type { PostgresPersistedDocumentStoreOptions } from './persisted-document-store.ts'
export { PostgresPersistedDocumentStore } from './persisted-document-store.ts'
