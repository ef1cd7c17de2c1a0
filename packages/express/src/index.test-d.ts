import type { Middleware } from '@api-blocks/core'
import type { RequestHandler } from 'express'
import { describe, expectTypeOf, test } from 'vitest'
import type { ExpressAdapterOptions, ExpressFetchHandler, ExpressMiddleware } from './index.ts'
import { clientAddressOf, routeParamsOf, toExpressHandler, toExpressMiddleware } from './index.ts'

describe('public types of @api-blocks/express', () => {
  test('both forms fit where Express takes a middleware', () => {
    expectTypeOf(
      toExpressHandler(async () => new Response('ok')),
    ).toEqualTypeOf<ExpressFetchHandler>()
    expectTypeOf<ExpressFetchHandler>().toExtend<RequestHandler>()
    const block: Middleware = (request, next) => next(request)
    expectTypeOf(toExpressMiddleware(block)).toEqualTypeOf<ExpressMiddleware>()
    expectTypeOf<ExpressMiddleware>().toExtend<RequestHandler>()
    // @ts-expect-error: a middleware takes (request, next), a handler is not one
    toExpressMiddleware(async (_request: Request, next: string) => new Response(next))
  })

  test('proxy trust is the app setting, not an option', () => {
    // @ts-expect-error: trustProxy belongs to the app ('trust proxy')
    const options: ExpressAdapterOptions = { trustProxy: true }
    void options
  })

  test('what the adapter records reads back typed', () => {
    expectTypeOf(clientAddressOf).returns.toEqualTypeOf<string | undefined>()
    expectTypeOf(routeParamsOf).returns.toEqualTypeOf<
      Readonly<Record<string, string>> | undefined
    >()
  })
})
