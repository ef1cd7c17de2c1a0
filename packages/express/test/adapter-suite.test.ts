import { runAdapterSuite } from '@api-blocks/adapter-suite'
import type { Middleware } from '@api-blocks/core'
import { restoreBody } from '@api-blocks/core'
import express from 'express'
import { toExpressHandler, toExpressMiddleware } from '../src/index.ts'
import { listen } from './start.ts'

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
