import { runAdapterSuite } from '@api-blocks/adapter-suite'
import Fastify from 'fastify'
import { expect, test } from 'vitest'
import { fastifyFetchHandler } from '../src/index.ts'
import { listen } from './start.ts'

const nativeResponse = globalThis.Response

runAdapterSuite('fastify', async (handler) => {
  const app = Fastify()
  await app.register(fastifyFetchHandler, { handler })
  return listen(app)
})

// Last in this file: it installs the lightweight globals for the rest of the process.
runAdapterSuite('fastify, lightweight: true', async (handler) => {
  const app = Fastify()
  await app.register(fastifyFetchHandler, { handler, lightweight: true })
  return listen(app)
})

test('lightweight: true replaced the globals, so the last suite ran on the fast path', () => {
  expect(globalThis.Response).not.toBe(nativeResponse)
  expect(new Response('x') instanceof nativeResponse).toBe(true)
})
