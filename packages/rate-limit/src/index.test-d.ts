import type { Handler, Middleware, Principal } from '@api-blocks/core'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  GcraCheck,
  GcraReply,
  RateLimitErrorCode,
  RateLimitEvent,
  RateLimitKeyOptions,
  RateLimitOptions,
  RateLimitResult,
  RateLimitStore,
} from './index.ts'
import {
  createRateLimiter,
  MemoryRateLimitStore,
  RateLimitError,
  rateLimit,
  rateLimitKey,
} from './index.ts'
import type { RateLimitStoreConformanceOptions } from './testing/index.ts'
import { runRateLimitStoreConformance } from './testing/index.ts'

const policies = [{ name: 'burst', quota: 10, windowSeconds: 1 }]

describe('public generics of @api-blocks/rate-limit', () => {
  test('a store answers with Promises only: a synchronous store does not compile', () => {
    expectTypeOf<RateLimitStore['consume']>().returns.toEqualTypeOf<Promise<GcraReply>>()
    expectTypeOf<RateLimitStore['reset']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<MemoryRateLimitStore>().toExtend<RateLimitStore>()
    const synchronous = {
      consume: (_check: GcraCheck): GcraReply => ({ allowed: true, debts: [0] }),
      reset: async (_key: string) => {},
    }
    // @ts-expect-error: consume must return a Promise
    const store: RateLimitStore = synchronous
    void store
  })

  test('RateLimitError narrows its code; there is no reason any more', () => {
    const error = new RateLimitError('STORE_UNAVAILABLE', 'down')
    expectTypeOf(error.code).toEqualTypeOf<RateLimitErrorCode>()
    expectTypeOf<RateLimitErrorCode>().toEqualTypeOf<'QUOTA_EXCEEDED' | 'STORE_UNAVAILABLE'>()
    expectTypeOf(error.result).toEqualTypeOf<RateLimitResult | undefined>()
    // @ts-expect-error: not a rate-limit code
    new RateLimitError('store_unavailable', 'down')
    // @ts-expect-error: the snake_case reason is gone
    void error.reason
  })

  test('events discriminate on type, each with its code', () => {
    const onEvent = (event: RateLimitEvent) => {
      if (event.type === 'rejected') {
        expectTypeOf(event.code).toEqualTypeOf<'QUOTA_EXCEEDED'>()
        expectTypeOf(event.result).toEqualTypeOf<RateLimitResult>()
      } else {
        expectTypeOf(event.code).toEqualTypeOf<'STORE_UNAVAILABLE'>()
        expectTypeOf(event.action).toEqualTypeOf<'fail-open' | 'fail-closed'>()
        // @ts-expect-error: a store error has no result
        void event.result
      }
    }
    expectTypeOf(onEvent).toExtend<NonNullable<RateLimitOptions['onEvent']>>()
  })

  test('rateLimit is core Middleware; onStoreError is optional and closed', () => {
    const store = new MemoryRateLimitStore()
    const limit = rateLimit({ store, policies, key: (request) => rateLimitKey(request) })
    expectTypeOf(limit).toEqualTypeOf<Middleware>()
    expectTypeOf(limit).parameter(1).toEqualTypeOf<Handler>()
    expectTypeOf<RateLimitOptions['onStoreError']>().toEqualTypeOf<
      'fail-open' | 'fail-closed' | undefined
    >()
    // @ts-expect-error: not a store-error policy
    rateLimit({ store, policies, key: () => 'k', onStoreError: 'ignore' })
    // a synchronous key function and an exempting undefined are fine
    rateLimit({
      store,
      policies,
      key: (request) => (request.method === 'OPTIONS' ? undefined : 'k'),
    })
  })

  test("rateLimitKey's principal: core's Principal, a subject string, or null", () => {
    const principal: Principal = { subject: 'ada', scopes: [], claims: {} }
    expectTypeOf(rateLimitKey(new Request('https://a.example/'), { principal })).toEqualTypeOf<
      Promise<string>
    >()
    expectTypeOf<{ principal: null }>().toExtend<RateLimitKeyOptions>()
    expectTypeOf<{ principal: 'ada' }>().toExtend<RateLimitKeyOptions>()
    // @ts-expect-error: a bare { subject } is not a Principal (scopes and claims are required)
    rateLimitKey(new Request('https://a.example/'), { principal: { subject: 'ada' } })
  })

  test('the limiter resolves to a result', () => {
    const limiter = createRateLimiter({ store: new MemoryRateLimitStore(), policies })
    expectTypeOf(limiter.check('k')).toEqualTypeOf<Promise<RateLimitResult>>()
  })

  test('the conformance suite keeps the concrete store type for close()', () => {
    class ClosableStore extends MemoryRateLimitStore {
      closed = false
    }
    expectTypeOf<RateLimitStoreConformanceOptions<ClosableStore>['close']>().toEqualTypeOf<
      ((store: ClosableStore) => void | Promise<void>) | undefined
    >()
    const options: RateLimitStoreConformanceOptions<ClosableStore> = {
      close: (store) => {
        expectTypeOf(store).toEqualTypeOf<ClosableStore>()
      },
    }
    expectTypeOf(runRateLimitStoreConformance<ClosableStore>)
      .parameter(2)
      .toEqualTypeOf<RateLimitStoreConformanceOptions<ClosableStore> | undefined>()
    void options
    // @ts-expect-error: what makeStore returns must be a RateLimitStore
    runRateLimitStoreConformance('not a store', () => ({ consume: () => 1 }))
  })
})
