import type { PersistedDocumentStore } from '@api-blocks/graphql'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import type { OAuthStore } from '@api-blocks/oauth'
import type { ProblemError } from '@api-blocks/problem-details'
import type { DedupStore, DeliveryQueue, EndpointStore } from '@api-blocks/webhooks'
import type { PGlite } from '@electric-sql/pglite'
import type pg from 'pg'
import { describe, expectTypeOf, test } from 'vitest'
import { PostgresPersistedDocumentStore } from './graphql.ts'
import type { PostgresStoreErrorCode, Queryable } from './index.ts'
import {
  migrate,
  type PostgresDedupStore,
  PostgresDeliveryQueue,
  type PostgresEndpointStore,
  PostgresIdempotencyStore,
  PostgresOAuthStore,
  PostgresStoreError,
} from './index.ts'

describe('public generics of @api-blocks/postgres', () => {
  test('PostgresIdempotencyStore is an IdempotencyStore: every operation a Promise', () => {
    expectTypeOf<PostgresIdempotencyStore>().toExtend<IdempotencyStore>()
    expectTypeOf<PostgresIdempotencyStore['sweepExpired']>().returns.toEqualTypeOf<
      Promise<number>
    >()
    // @ts-expect-error: a connection is required
    new PostgresIdempotencyStore({ schema: 'api' })
  })

  test('PostgresOAuthStore is an OAuthStore, with purgeExpired and withDb of its own', () => {
    expectTypeOf<PostgresOAuthStore>().toExtend<OAuthStore>()
    expectTypeOf<PostgresOAuthStore['purgeExpired']>().returns.toEqualTypeOf<Promise<number>>()
    expectTypeOf<PostgresOAuthStore['withDb']>().returns.toEqualTypeOf<PostgresOAuthStore>()
    // @ts-expect-error: a connection is required
    new PostgresOAuthStore({ schema: 'auth' })
  })

  test('PostgresPersistedDocumentStore is a PersistedDocumentStore of @api-blocks/graphql', () => {
    expectTypeOf<PostgresPersistedDocumentStore>().toExtend<PersistedDocumentStore>()
    // @ts-expect-error: a connection is required
    new PostgresPersistedDocumentStore({ maxDocuments: 10 })
  })

  test('the webhook stores implement the contracts of @api-blocks/webhooks', () => {
    expectTypeOf<PostgresEndpointStore>().toExtend<EndpointStore>()
    expectTypeOf<PostgresDeliveryQueue>().toExtend<DeliveryQueue>()
    expectTypeOf<PostgresDedupStore>().toExtend<DedupStore>()
    // The outbox: only enqueue, on the caller's connection.
    expectTypeOf<PostgresDeliveryQueue['inTransaction']>().parameter(0).toEqualTypeOf<Queryable>()
    expectTypeOf<ReturnType<PostgresDeliveryQueue['inTransaction']>>().toEqualTypeOf<
      Pick<DeliveryQueue, 'enqueue'>
    >()
    expectTypeOf<PostgresDeliveryQueue['purge']>().returns.toEqualTypeOf<Promise<number>>()
    expectTypeOf<PostgresDedupStore['purgeExpired']>().returns.toEqualTypeOf<Promise<number>>()
    // @ts-expect-error: a connection is required
    new PostgresDeliveryQueue({ schema: 'webhooks' })
  })

  test('pg.Pool, pg.Client and PGlite are Queryable; a synchronous query is not', () => {
    expectTypeOf<pg.Pool>().toExtend<Queryable>()
    expectTypeOf<pg.Client>().toExtend<Queryable>()
    expectTypeOf<PGlite>().toExtend<Queryable>()
    expectTypeOf<{ query(text: string): { rows: unknown[] } }>().not.toExtend<Queryable>()
    expectTypeOf(migrate).parameter(0).toEqualTypeOf<Queryable>()
  })

  test('PostgresStoreError narrows its code', () => {
    const error = new PostgresStoreError('NOT_MIGRATED', 'migrate', 'run migrate() first')
    expectTypeOf(error.code).toEqualTypeOf<PostgresStoreErrorCode>()
    expectTypeOf(error).toExtend<ProblemError>() // an ApiBlocksError
    // @ts-expect-error: the snake_case reasons are gone
    new PostgresStoreError('not_migrated', 'migrate', 'run migrate() first')
  })
})
