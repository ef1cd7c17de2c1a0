import type { IdempotencyStore } from '@api-blocks/idempotency'
import type { OAuthStore } from '@api-blocks/oauth'
import type { ProblemError } from '@api-blocks/problem-details'
import type { DedupStore } from '@api-blocks/webhooks'
import { describe, expectTypeOf, test } from 'vitest'
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

  test('RedisStoreError narrows its code', () => {
    const error = new RedisStoreError('COMMAND_FAILED', 'idempotency.claim', 'failed')
    expectTypeOf(error.code).toEqualTypeOf<RedisStoreErrorCode>()
    expectTypeOf(error).toExtend<ProblemError>() // an ApiBlocksError
    expectTypeOf<RedisStoreErrorCode>().toEqualTypeOf<'COMMAND_FAILED' | 'UNEXPECTED_REPLY'>()
    // @ts-expect-error: the snake_case reasons are gone
    new RedisStoreError('command_failed', 'idempotency.claim', 'failed')
  })
})
