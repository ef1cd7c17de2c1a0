import { runAdapterSuite } from '@api-blocks/adapter-suite'
import Fastify from 'fastify'
import { fastifyFetchHandler } from '../src/index.ts'
import { listen } from './start.ts'

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
