import { runAdapterSuite } from '@api-blocks/adapter-suite'
import Fastify from 'fastify'
import { fastifyFetchHandler } from '../src/index.ts'
import { listen } from './start.ts'

runAdapterSuite('fastify', async (handler) => {
  const app = Fastify()
  await app.register(fastifyFetchHandler, { handler })
  return listen(app)
})
