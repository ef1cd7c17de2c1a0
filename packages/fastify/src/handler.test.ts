import type { Handler } from '@api-blocks/core'
import type { NodeAdapterError } from '@api-blocks/node'
import Fastify from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import type { Listening } from '../test/start.ts'
import { listen } from '../test/start.ts'
import { toFastifyHandler } from './handler.ts'
import { clientAddressOf, routeParamsOf } from './index.ts'
import { fastifyFetchHandler } from './plugin.ts'

const echo: Handler = async (request) =>
  Response.json({
    method: request.method,
    url: request.url,
    body: request.body === null ? null : await request.text(),
  })

let running: Listening | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

describe('fastifyFetchHandler', () => {
  test('serves every method and path under its prefix, the root included', async () => {
    const app = Fastify()
    await app.register(fastifyFetchHandler, { prefix: '/v1', handler: echo })
    app.get('/outside', async () => ({ outside: true }))
    running = await listen(app)
    for (const path of ['/v1', '/v1/', '/v1/a/b?c=d']) {
      const response = await fetch(`${running.url}${path}`, { method: 'PATCH', body: 'x' })
      expect(await response.json()).toEqual({
        method: 'PATCH',
        url: `${running.url}${path}`,
        body: 'x',
      })
    }
    expect(await (await fetch(`${running.url}/outside`)).json()).toEqual({ outside: true })
  })

  test('leaves JSON bodies unparsed inside the plugin only', async () => {
    const app = Fastify()
    await app.register(fastifyFetchHandler, { prefix: '/fetch', handler: echo })
    app.post('/fastify', async (request) => ({ parsed: request.body }))
    running = await listen(app)
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    }
    expect(await (await fetch(`${running.url}/fetch/x`, init)).json()).toMatchObject({
      body: '{"a":1}',
    })
    expect(await (await fetch(`${running.url}/fastify`, init)).json()).toEqual({ parsed: { a: 1 } })
  })

  test("scheme and host follow Fastify's trustProxy option", async () => {
    const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' }
    const app = Fastify({ trustProxy: true })
    await app.register(fastifyFetchHandler, { handler: echo })
    running = await listen(app)
    const response = await fetch(`${running.url}/x`, { headers })
    expect(((await response.json()) as { url: string }).url).toBe('https://api.example.com/x')
  })

  test('headers that hooks set on the reply are sent; the Response wins a conflict', async () => {
    const app = Fastify()
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('x-hook', 'yes')
      reply.header('cache-control', 'public')
    })
    let completed = 0
    app.addHook('onResponse', async () => {
      completed++
    })
    await app.register(fastifyFetchHandler, {
      handler: async () => new Response('ok', { headers: { 'cache-control': 'no-store' } }),
    })
    running = await listen(app)
    const response = await fetch(`${running.url}/`)
    expect(response.headers.get('x-hook')).toBe('yes')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await response.text()).toBe('ok')
    expect(completed).toBe(1)
  })
})

describe('toFastifyHandler on an ordinary route', () => {
  test("hands over a body Fastify's text parser read", async () => {
    const app = Fastify()
    app.post('/text', toFastifyHandler(echo))
    running = await listen(app)
    const response = await fetch(`${running.url}/text`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'déjà vu',
    })
    expect(((await response.json()) as { body: string }).body).toBe('déjà vu')
  })

  test("a body Fastify's JSON parser parsed fails to read with REQUEST_BODY_CONSUMED", async () => {
    const errors: unknown[] = []
    const app = Fastify()
    app.post('/json', toFastifyHandler(echo, { onError: (error) => errors.push(error) }))
    running = await listen(app)
    const response = await fetch(`${running.url}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect((errors[0] as NodeAdapterError).code).toBe('REQUEST_BODY_CONSUMED')
    expect((errors[0] as NodeAdapterError).status).toBe(500)
  })

  test('route parameters are recorded for routeParamsOf', async () => {
    const params: Handler = async (request) => Response.json(routeParamsOf(request) ?? null)
    const app = Fastify()
    app.get('/orders/:id', toFastifyHandler(params))
    app.get('/files/*', toFastifyHandler(params))
    app.get('/plain', toFastifyHandler(params))
    running = await listen(app)
    expect(await (await fetch(`${running.url}/orders/ord_7`)).json()).toEqual({ id: 'ord_7' })
    expect(await (await fetch(`${running.url}/files/a/b.txt`)).json()).toEqual({ '*': 'a/b.txt' })
    expect(await (await fetch(`${running.url}/plain`)).json()).toBeNull()
  })

  test.each([
    [false, '127.0.0.1'],
    [true, '203.0.113.7'],
  ])(
    "clientAddressOf is request.ip: Fastify's trustProxy option (%s) decides",
    async (trustProxy, address) => {
      const app = Fastify({ trustProxy })
      app.get(
        '/',
        toFastifyHandler(async (request) => Response.json({ address: clientAddressOf(request) })),
      )
      running = await listen(app)
      const response = await fetch(running.url, { headers: { 'x-forwarded-for': '203.0.113.7' } })
      expect(await response.json()).toEqual({ address })
    },
  )
})
