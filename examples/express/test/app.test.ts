import { once } from 'node:events'
import type { Server } from 'node:http'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createApp } from '../src/app.ts'

let server: Server
let url: string
beforeAll(async () => {
  server = createApp().listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

test('Express routes and the mounted handler live side by side', async () => {
  expect(await (await fetch(`${url}/`)).text()).toContain('Express app')
  expect(await (await fetch(`${url}/v1/health`)).json()).toEqual({ status: 'ok' })
  const echo = await fetch(`${url}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
  })
  expect(await echo.json()).toEqual({ echo: { a: 1 } })
})

test('the requestId block in front answers for Express routes and the handler alike', async () => {
  for (const path of ['/', '/v1/health', '/missing']) {
    const response = await fetch(`${url}${path}`, { headers: { 'x-request-id': 'example-1' } })
    await response.arrayBuffer()
    expect([path, response.headers.get('x-request-id')]).toEqual([path, 'example-1'])
  }
})

test('the handler reads and limits bodies itself', async () => {
  const created = await fetch(`${url}/v1/notes`, { method: 'POST', body: 'buy milk' })
  expect(created.status).toBe(201)
  const tooLong = await fetch(`${url}/v1/notes`, { method: 'POST', body: 'x'.repeat(2000) })
  expect(tooLong.status).toBe(413)
})

test('thrown problems become application/problem+json', async () => {
  const missing = await fetch(`${url}/v1/nothing`)
  expect(missing.status).toBe(404)
  expect(missing.headers.get('content-type')).toBe('application/problem+json')
  expect(((await missing.json()) as { instance: string }).instance).toBe('/v1/nothing')
})
