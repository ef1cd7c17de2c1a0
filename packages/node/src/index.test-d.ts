import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  Handler,
  Middleware,
  NodeAdapterErrorCode,
  NodeAdapterOptions,
  NodeListener,
  NodeRequestOptions,
} from './index.ts'
import {
  handleNodeMiddleware,
  handleNodeRequest,
  installLightweightGlobals,
  NodeAdapterError,
  restoreNativeGlobals,
  serve,
  toNodeListener,
} from './index.ts'

describe('public types of @api-blocks/node', () => {
  test('a listener serves a Fetch handler and fits node:http', () => {
    const handler: Handler = async () => new Response('ok')
    expectTypeOf(toNodeListener(handler)).toEqualTypeOf<NodeListener>()
    expectTypeOf<NodeListener>().parameters.toEqualTypeOf<[IncomingMessage, ServerResponse]>()
    // @ts-expect-error: a handler answers a Promise of a Response
    toNodeListener(async () => 'ok')
    // @ts-expect-error: the option is a boolean
    serve(handler, { lightweight: 'yes' })
  })

  test('the per-request forms never reject and take what a framework resolved', () => {
    expectTypeOf(handleNodeRequest).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(handleNodeMiddleware).parameter(0).toEqualTypeOf<Middleware>()
    expectTypeOf(handleNodeMiddleware).parameter(3).toEqualTypeOf<() => void>()
    expectTypeOf<NodeRequestOptions>().toExtend<NodeAdapterOptions>()
    // What the frameworks hand over as they are: Express's req.params and req.body.
    expectTypeOf<{ id: string; path: string[] }>().toExtend<
      NonNullable<NodeRequestOptions['routeParams']>
    >()
    expectTypeOf<NodeRequestOptions['body']>().toEqualTypeOf<unknown>()
  })

  test('the globals are installed and restored explicitly', () => {
    expectTypeOf(installLightweightGlobals).returns.toEqualTypeOf<boolean>()
    expectTypeOf(restoreNativeGlobals).returns.toEqualTypeOf<void>()
  })

  test('NodeAdapterError narrows its code', () => {
    const error = new NodeAdapterError('REQUEST_ABORTED', 'gone')
    expectTypeOf(error.code).toEqualTypeOf<NodeAdapterErrorCode>()
    // @ts-expect-error: not a code of the node adapter
    new NodeAdapterError('NOT_A_CODE', 'x')
  })
})
