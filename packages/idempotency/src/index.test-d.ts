import type { ApiBlocksError, Middleware } from '@api-blocks/core'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  IdempotencyClaimResult,
  IdempotencyContext,
  IdempotencyErrorCode,
  IdempotencyEvent,
  IdempotencyOptions,
  IdempotencyStore,
  StoredResponse,
} from './index.ts'
import {
  computeFingerprint,
  deriveStoreKey,
  IdempotencyError,
  idempotency,
  idempotencyContext,
  MemoryIdempotencyStore,
} from './index.ts'
import { runIdempotencyStoreConformance } from './testing/index.ts'

const store = new MemoryIdempotencyStore()

describe('public generics of @api-blocks/idempotency', () => {
  test('every store operation returns a Promise; a store that answers synchronously is not one', () => {
    expectTypeOf<ReturnType<IdempotencyStore['claim']>>().toEqualTypeOf<
      Promise<IdempotencyClaimResult>
    >()
    expectTypeOf<ReturnType<IdempotencyStore['complete']>>().toEqualTypeOf<Promise<boolean>>()
    expectTypeOf<ReturnType<IdempotencyStore['release']>>().toEqualTypeOf<Promise<boolean>>()
    expectTypeOf<ReturnType<IdempotencyStore['checkpoint']>>().toEqualTypeOf<Promise<boolean>>()
    expectTypeOf(store).toExtend<IdempotencyStore>()
    const synchronous = {
      claim: (): IdempotencyClaimResult => ({ state: 'mismatch' }),
      complete: () => true,
      release: () => true,
      checkpoint: () => true,
    }
    expectTypeOf(synchronous).not.toExtend<IdempotencyStore>()
  })

  test('a claim result discriminates on its state', () => {
    const result = {} as IdempotencyClaimResult
    if (result.state === 'completed') expectTypeOf(result.response).toEqualTypeOf<StoredResponse>()
    if (result.state === 'in-flight') expectTypeOf(result.leaseExpiresAt).toEqualTypeOf<number>()
    if (result.state === 'claimed') {
      expectTypeOf(result.recoveryPoint).toEqualTypeOf<string | undefined>()
    }
  })

  test('the middleware is a core Middleware; the store is required, the scope optional', () => {
    expectTypeOf(idempotency({ store })).toEqualTypeOf<Middleware>()
    expectTypeOf(idempotency({ store, scope: 'tenant-1' })).toEqualTypeOf<Middleware>()
    expectTypeOf(idempotency({ store, scope: async () => 'tenant-1' })).toEqualTypeOf<Middleware>()
    // @ts-expect-error: no store
    idempotency({ scope: 'tenant-1' })
    // @ts-expect-error: a scope is a string or a function of the request
    idempotency({ store, scope: 42 })
    expectTypeOf<IdempotencyOptions['scope']>().toEqualTypeOf<
      string | ((request: Request) => string | Promise<string>) | undefined
    >()
  })

  test('IdempotencyError narrows its code to the package codes', () => {
    const error = new IdempotencyError('IDEMPOTENCY_KEY_REUSED', 'reused')
    expectTypeOf(error.code).toEqualTypeOf<IdempotencyErrorCode>()
    expectTypeOf(error).toExtend<ApiBlocksError>()
    expectTypeOf<'IDEMPOTENCY_SCOPE_UNKNOWN'>().toExtend<IdempotencyErrorCode>()
    // @ts-expect-error: the snake_case reasons are gone
    new IdempotencyError('key_reused', 'reused')
  })

  test('events carry the code, not a reason', () => {
    expectTypeOf<Extract<IdempotencyEvent, { type: 'rejected' }>>().toEqualTypeOf<{
      readonly type: 'rejected'
      readonly code: IdempotencyErrorCode
    }>()
  })

  test('the context, the fingerprint and the store key', () => {
    expectTypeOf(idempotencyContext).returns.toEqualTypeOf<IdempotencyContext | undefined>()
    expectTypeOf<IdempotencyContext['checkpoint']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(computeFingerprint).returns.toEqualTypeOf<Promise<string>>()
    expectTypeOf(deriveStoreKey).returns.toEqualTypeOf<Promise<string>>()
  })

  test('the conformance suite takes a store or a promise of one', () => {
    expectTypeOf(runIdempotencyStoreConformance)
      .parameter(1)
      .toEqualTypeOf<() => IdempotencyStore | Promise<IdempotencyStore>>()
  })
})
