import { once } from 'node:events'
import type { Server } from 'node:http'
import type { StartedServer } from '@api-blocks/adapter-suite'
import { runAdapterSuite } from '@api-blocks/adapter-suite'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createApp } from '../src/app.ts'
import { handler } from '../src/handler.ts'

async function start(fetchHandler: (request: Request) => Promise<Response>, mount: string) {
  const server = serve({
    fetch: createApp(fetchHandler, mount).fetch,
    port: 0,
    hostname: '127.0.0.1',
  }) as Server
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

// The behaviour every adapter passes, on Hono with @hono/node-server's default settings.
runAdapterSuite('hono on @hono/node-server', (suiteHandler) => start(suiteHandler, '/*'), {
  exceptions: { 'head-length': '@hono/node-server sends no Content-Length on HEAD' },
})

let example: StartedServer
beforeAll(async () => {
  example = await start(handler, '/v1/*')
})
afterAll(() => example.close())

test('the example answers its routes and problems', async () => {
  expect(await (await fetch(`${example.url}/v1/health`)).json()).toEqual({ status: 'ok' })
  const created = await fetch(`${example.url}/v1/notes`, { method: 'POST', body: 'buy milk' })
  expect(created.status).toBe(201)
  const tooLong = await fetch(`${example.url}/v1/notes`, { method: 'POST', body: 'x'.repeat(2000) })
  expect(tooLong.status).toBe(413)
  const missing = await fetch(`${example.url}/v1/nothing`)
  expect(missing.status).toBe(404)
  expect(missing.headers.get('content-type')).toBe('application/problem+json')
})
