import type { PersistedDocumentStore, PubSub } from '@api-blocks/graphql'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import type { OAuthStore } from '@api-blocks/oauth'
import type { ProblemError } from '@api-blocks/problem-details'
import type { DedupStore } from '@api-blocks/webhooks'
import type {
  createClient,
  RedisClientType,
  RedisFunctions,
  RedisModules,
  RedisScripts,
  TypeMapping,
} from 'redis'
import { describe, expectTypeOf, test } from 'vitest'
import type { RedisPersistedDocumentStoreOptions, RedisPubSubClient } from './graphql.ts'
import { type RedisPersistedDocumentStore, RedisPubSub } from './graphql.ts'
import type {
  RedisDedupStoreOptions,
  RedisIdempotencyStoreOptions,
  RedisOAuthStoreOptions,
  RedisScriptClient,
  RedisStoreErrorCode,
} from './index.ts'
import {
  RedisDedupStore,
  RedisIdempotencyStore,
  RedisOAuthStore,
  RedisStoreError,
} from './index.ts'

describe('public generics of @api-blocks/redis', () => {
  test('RedisIdempotencyStore is an IdempotencyStore: every operation a Promise', () => {
    expectTypeOf<RedisIdempotencyStore>().toExtend<IdempotencyStore>()
    expectTypeOf<RedisIdempotencyStore['claim']>().returns.toExtend<Promise<unknown>>()
    expectTypeOf<RedisIdempotencyStoreOptions['client']>().toEqualTypeOf<RedisScriptClient>()
    // @ts-expect-error: a client is required
    new RedisIdempotencyStore({ prefix: 'p:' })
  })

  test('RedisOAuthStore is an OAuthStore: every method a Promise', () => {
    expectTypeOf<RedisOAuthStore>().toExtend<OAuthStore>()
    expectTypeOf<RedisOAuthStore['rotateRefresh']>().returns.toExtend<Promise<unknown>>()
    expectTypeOf<RedisOAuthStoreOptions['client']>().toEqualTypeOf<RedisScriptClient>()
    // @ts-expect-error: a client is required
    new RedisOAuthStore({ prefix: 'p:' })
  })

  test('RedisDedupStore is a DedupStore of @api-blocks/webhooks', () => {
    expectTypeOf<RedisDedupStore>().toExtend<DedupStore>()
    expectTypeOf<RedisDedupStoreOptions['client']>().toEqualTypeOf<RedisScriptClient>()
    // @ts-expect-error: a client is required
    new RedisDedupStore({ prefix: 'p:' })
  })

  test('RedisPersistedDocumentStore and RedisPubSub are the stores of @api-blocks/graphql', () => {
    expectTypeOf<RedisPersistedDocumentStore>().toExtend<PersistedDocumentStore>()
    expectTypeOf<RedisPersistedDocumentStoreOptions['client']>().toEqualTypeOf<RedisScriptClient>()
    expectTypeOf<RedisPubSub>().toExtend<PubSub>()
    // @ts-expect-error: a client is required
    new RedisPubSub({ prefix: 'p:' })
  })

  test('node-redis clients satisfy RedisPubSubClient as they are (RESP3 and RESP2)', () => {
    expectTypeOf<ReturnType<typeof createClient>>().toExtend<RedisPubSubClient>()
    expectTypeOf<
      RedisClientType<RedisModules, RedisFunctions, RedisScripts, 2, TypeMapping>
    >().toExtend<RedisPubSubClient>()
    expectTypeOf<{ publish(channel: string): Promise<unknown> }>().not.toExtend<RedisPubSubClient>()
  })

  test('RedisStoreError narrows its code', () => {
    const error = new RedisStoreError('COMMAND_FAILED', 'idempotency.claim', 'failed')
    expectTypeOf(error.code).toEqualTypeOf<RedisStoreErrorCode>()
    expectTypeOf(error).toExtend<ProblemError>() // an ApiBlocksError
    expectTypeOf<RedisStoreErrorCode>().toEqualTypeOf<'COMMAND_FAILED' | 'UNEXPECTED_REPLY'>()
    // @ts-expect-error: the snake_case reasons are gone
    new RedisStoreError('command_failed', 'idempotency.claim', 'failed')
  })
})
