/**
 * PostgreSQL implementations of the api-blocks store interfaces (idempotency, the OAuth
 * authorisation server's, the webhooks' endpoint store, delivery queue and dedup store; GraphQL's
 * persisted documents on the `@api-blocks/postgres/graphql` subpath), on any connection with `query(text, params)`: `pg.Pool`,
 * `pg.Client` or PGlite (in-process, no server). The schema ships as data (`migrations`) with
 * `migrate()`, safe to run from several instances at once.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite'
 * import { migrate, PostgresIdempotencyStore } from '@api-blocks/postgres'
 *
 * const db = new PGlite()
 * await migrate(db)
 * const store = new PostgresIdempotencyStore({ db })
 * ```
 *
 * @module
 */

export type { PostgresStoreErrorCode } from './error.ts'
export { PostgresStoreError } from './error.ts'
export type { PostgresIdempotencyStoreOptions, SweepOptions } from './idempotency-store.ts'
export { PostgresIdempotencyStore } from './idempotency-store.ts'
export type { Migration, MigrationResult, PostgresTableOptions } from './migrations.ts'
export { migrate, migrations, postgresMigrations } from './migrations.ts'
export type { PostgresOAuthStoreOptions } from './oauth-store.ts'
export { PostgresOAuthStore } from './oauth-store.ts'
export type { Queryable } from './queryable.ts'
export type { PostgresDedupStoreOptions } from './webhook-dedup-store.ts'
export { PostgresDedupStore } from './webhook-dedup-store.ts'
export type { PostgresDeliveryQueueOptions } from './webhook-delivery-queue.ts'
export { PostgresDeliveryQueue } from './webhook-delivery-queue.ts'
export type { PostgresEndpointStoreOptions } from './webhook-endpoint-store.ts'
export { PostgresEndpointStore } from './webhook-endpoint-store.ts'
