import type { Handler } from '@api-blocks/core'
import { NodeAdapterError } from '@api-blocks/node'
import express from 'express'
import { afterEach, describe, expect, test } from 'vitest'
import type { Listening } from '../test/start.ts'
import { listen } from '../test/start.ts'
import { toExpressHandler } from './handler.ts'
import { clientAddressOf, routeParamsOf } from './index.ts'

const echo: Handler = async (request) =>
  Response.json({
    url: request.url,
    body: request.body === null ? null : await request.text(),
  })

let running: Listening | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

describe('toExpressHandler', () => {
  test('the Request URL keeps the mount path Express strips from req.url', async () => {
    running = await listen(express().use('/api/v1', toExpressHandler(echo)))
    const response = await fetch(`${running.url}/api/v1/orders/7?expand=items`)
    expect(await response.json()).toEqual({
      url: `${running.url}/api/v1/orders/7?expand=items`,
      body: null,
    })
  })

  test("scheme and host follow the app's trust proxy setting", async () => {
    const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' }
    running = await listen(express().use(toExpressHandler(echo)))
    const untrusted = await fetch(`${running.url}/x`, { headers })
    expect(((await untrusted.json()) as { url: string }).url).toBe(`${running.url}/x`)
    await running.close()
    running = await listen(express().set('trust proxy', true).use(toExpressHandler(echo)))
    const trusted = await fetch(`${running.url}/x`, { headers })
    expect(((await trusted.json()) as { url: string }).url).toBe('https://api.example.com/x')
  })

  test('a body express.raw() already read is handed over byte for byte', async () => {
    const app = express()
      .use(express.raw({ type: '*/*' }))
      .use(toExpressHandler(echo))
    running = await listen(app)
    const response = await fetch(`${running.url}/raw`, { method: 'POST', body: 'raw bytes ✓' })
    expect(((await response.json()) as { body: string }).body).toBe('raw bytes ✓')
  })

  test('a body express.text() already read is handed over as UTF-8', async () => {
    const app = express().use(express.text()).use(toExpressHandler(echo))
    running = await listen(app)
    const response = await fetch(`${running.url}/text`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'déjà vu',
    })
    expect(((await response.json()) as { body: string }).body).toBe('déjà vu')
  })

  test('a body express.json() parsed fails to read with REQUEST_BODY_CONSUMED, as a 500', async () => {
    const errors: unknown[] = []
    const app = express()
      .use(express.json())
      .use(toExpressHandler(echo, { onError: (error) => errors.push(error) }))
    running = await listen(app)
    const parsed = await fetch(`${running.url}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(parsed.status).toBe(500)
    expect(parsed.headers.get('content-type')).toBe('application/problem+json')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(NodeAdapterError)
    expect((errors[0] as NodeAdapterError).code).toBe('REQUEST_BODY_CONSUMED')
    expect((errors[0] as NodeAdapterError).status).toBe(500)
    // A body the parser skipped (another media type) still streams from the socket.
    const skipped = await fetch(`${running.url}/json`, { method: 'POST', body: 'plain' })
    expect(((await skipped.json()) as { body: string }).body).toBe('plain')
  })

  test('every way of reading a body express.json() parsed fails with the same error', async () => {
    const reads: Record<string, (request: Request) => Promise<unknown>> = {
      bytes: (request) => request.bytes(),
      text: (request) => request.text(),
      stream: async (request) => {
        const reader = request.body!.getReader()
        for (let next = await reader.read(); !next.done; next = await reader.read()) {
          // read to the end
        }
      },
    }
    const app = express()
      .use(express.json())
      .use(
        toExpressHandler(async (request) => {
          const read = reads[new URL(request.url).pathname.slice(1)]!
          const error = await read(request).then(
            () => undefined,
            (failure: unknown) => failure,
          )
          return Response.json({
            adapterError: error instanceof NodeAdapterError,
            code: (error as NodeAdapterError | undefined)?.code ?? null,
            status: (error as NodeAdapterError | undefined)?.status ?? null,
          })
        }),
      )
    running = await listen(app)
    for (const way of Object.keys(reads)) {
      const response = await fetch(`${running.url}/${way}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      })
      expect([way, await response.json()]).toEqual([
        way,
        { adapterError: true, code: 'REQUEST_BODY_CONSUMED', status: 500 },
      ])
    }
  })

  test('route parameters are recorded for routeParamsOf, a wildcard as one path', async () => {
    const params: Handler = async (request) => Response.json(routeParamsOf(request) ?? null)
    const app = express()
      .get('/orders/:id', toExpressHandler(params))
      .get('/files/*path', toExpressHandler(params))
      .use('/plain', toExpressHandler(params))
    running = await listen(app)
    expect(await (await fetch(`${running.url}/orders/ord_7`)).json()).toEqual({ id: 'ord_7' })
    expect(await (await fetch(`${running.url}/files/a/b.txt`)).json()).toEqual({ path: 'a/b.txt' })
    expect(await (await fetch(`${running.url}/plain/x`)).json()).toBeNull()
  })

  test.each([
    [false, '127.0.0.1'],
    [true, '203.0.113.7'],
  ])(
    "clientAddressOf is req.ip: the app's trust proxy setting (%s) decides",
    async (trust, address) => {
      const app = express()
        .set('trust proxy', trust)
        .use(
          toExpressHandler(async (request) => Response.json({ address: clientAddressOf(request) })),
        )
      running = await listen(app)
      const response = await fetch(running.url, { headers: { 'x-forwarded-for': '203.0.113.7' } })
      expect(await response.json()).toEqual({ address })
    },
  )

  test('headers set by earlier middleware are kept; the Response wins a conflict', async () => {
    const app = express()
      .use((_req, res, next) => {
        res.setHeader('x-frame-options', 'DENY')
        res.setHeader('cache-control', 'public, max-age=60')
        next()
      })
      .use(
        toExpressHandler(
          async () => new Response('ok', { headers: { 'cache-control': 'no-store' } }),
        ),
      )
    running = await listen(app)
    const response = await fetch(`${running.url}/`)
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('cache-control')).toBe('no-store')
  })

  test('works as a route handler for one method', async () => {
    running = await listen(express().get('/only-get', toExpressHandler(echo)))
    expect((await fetch(`${running.url}/only-get`)).status).toBe(200)
    expect((await fetch(`${running.url}/only-get`, { method: 'POST' })).status).toBe(404)
  })
})
