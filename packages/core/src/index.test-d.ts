import { describe, expectTypeOf, test } from 'vitest'
import type {
  BodyInitLike,
  ContextKey,
  Handler,
  HeadersInitLike,
  Middleware,
  Principal,
} from './index.ts'
import { ApiBlocksError, contextKey, getContext, readAhead, sharedContextKey } from './index.ts'

describe('public generics of @api-blocks/core', () => {
  test('a context key carries its value type to getContext', () => {
    const key = contextKey<{ tenant: string }>('tenant')
    expectTypeOf(key).toEqualTypeOf<ContextKey<{ tenant: string }>>()
    expectTypeOf(getContext(new Request('https://a.example/'), key)).toEqualTypeOf<
      { tenant: string } | undefined
    >()
    expectTypeOf(sharedContextKey<number>('x')).toEqualTypeOf<ContextKey<number>>()
  })

  test('ApiBlocksError narrows its code', () => {
    const error = new ApiBlocksError<'A' | 'B'>('A', 'x')
    expectTypeOf(error.code).toEqualTypeOf<'A' | 'B'>()
    // @ts-expect-error: not one of the codes
    new ApiBlocksError<'A' | 'B'>('C', 'x')
    expectTypeOf(new ApiBlocksError('ANY', 'x').code).toEqualTypeOf<'ANY'>()
  })

  test('Handler and Middleware are plain Fetch functions', () => {
    expectTypeOf<Handler>().toEqualTypeOf<(request: Request) => Promise<Response>>()
    expectTypeOf<Middleware>().parameter(1).toEqualTypeOf<Handler>()
  })

  test('readAhead discriminates on complete', async () => {
    const ahead = await readAhead(new Response('x').body!, 10)
    if (ahead.complete) expectTypeOf(ahead.bytes).toEqualTypeOf<Uint8Array>()
    else expectTypeOf(ahead.stream).toEqualTypeOf<ReadableStream<Uint8Array>>()
  })

  test('the init aliases accept what the constructors accept', () => {
    expectTypeOf<Record<string, string>>().toExtend<HeadersInitLike>()
    expectTypeOf<string>().toExtend<BodyInitLike>()
    expectTypeOf<Principal['scopes']>().toEqualTypeOf<readonly string[]>()
  })
})
