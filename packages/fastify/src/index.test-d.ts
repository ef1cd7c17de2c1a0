import type { FastifyPluginCallback, RouteHandlerMethod } from 'fastify'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  FastifyAdapterOptions,
  FastifyFetchHandler,
  FastifyFetchHandlerOptions,
} from './index.ts'
import { clientAddressOf, fastifyFetchHandler, routeParamsOf, toFastifyHandler } from './index.ts'

describe('public types of @api-blocks/fastify', () => {
  test('the route handler fits a Fastify route, the plugin registers with its options', () => {
    expectTypeOf(
      toFastifyHandler(async () => new Response('ok')),
    ).toEqualTypeOf<FastifyFetchHandler>()
    expectTypeOf<FastifyFetchHandler>().toExtend<RouteHandlerMethod>()
    expectTypeOf(fastifyFetchHandler).toEqualTypeOf<
      FastifyPluginCallback<FastifyFetchHandlerOptions>
    >()
    // @ts-expect-error: the plugin needs its handler
    const missing: FastifyFetchHandlerOptions = { prefix: '/v1' }
    expectTypeOf(missing).toExtend<FastifyAdapterOptions>()
  })

  test('proxy trust is the server option, not an adapter option', () => {
    // @ts-expect-error: trustProxy belongs to Fastify({ trustProxy })
    const options: FastifyAdapterOptions = { trustProxy: true }
    void options
  })

  test('what the adapter records reads back typed', () => {
    expectTypeOf(clientAddressOf).returns.toEqualTypeOf<string | undefined>()
    expectTypeOf(routeParamsOf).returns.toEqualTypeOf<
      Readonly<Record<string, string>> | undefined
    >()
  })
})
