import { runAdapterSuite } from '@api-blocks/adapter-suite'
import type { Middleware } from '@api-blocks/core'
import { restoreBody } from '@api-blocks/core'
import express from 'express'
import { expect, test } from 'vitest'
import { toExpressHandler, toExpressMiddleware } from '../src/index.ts'
import { listen } from './start.ts'

const nativeResponse = globalThis.Response

runAdapterSuite('express', (handler) => listen(express().use(toExpressHandler(handler))))

// The middleware form in front of Express's own next handler, here the handler form: what
// the suite checks then goes through the capture of the downstream's writes.
const passOn: Middleware = (request, next) => next(request)
runAdapterSuite('express, toExpressMiddleware passing on', (handler) =>
  listen(express().use(toExpressMiddleware(passOn)).use(toExpressHandler(handler))),
)

// A block that reads the whole body and hands it on (as idempotency() does): the bytes go
// back into the request for the next Express handler.
const readsBody: Middleware = async (request, next) => {
  if (request.body === null) return next(request)
  const bytes = await request.bytes()
  return next(restoreBody(request, bytes) ? request : new Request(request, { body: bytes }))
}
runAdapterSuite('express, toExpressMiddleware reading the body', (handler) =>
  listen(express().use(toExpressMiddleware(readsBody)).use(toExpressHandler(handler))),
)

// Last in this file: it installs the lightweight globals for the rest of the process.
runAdapterSuite('express, lightweight: true', (handler) =>
  listen(express().use(toExpressHandler(handler, { lightweight: true }))),
)

test('lightweight: true replaced the globals, so the last suite ran on the fast path', () => {
  expect(globalThis.Response).not.toBe(nativeResponse)
  expect(new Response('x') instanceof nativeResponse).toBe(true)
})
