import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createApp } from '../src/app.ts'

let app: FastifyInstance
let url: string
beforeAll(async () => {
  app = await createApp()
  await app.listen({ port: 0, host: '127.0.0.1' })
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
})
afterAll(async () => {
  app.server.closeAllConnections()
  await app.close()
})

test('Fastify routes and the registered handler live side by side', async () => {
  expect(await (await fetch(`${url}/`)).text()).toContain('Fastify app')
  expect(await (await fetch(`${url}/v1/health`)).json()).toEqual({ status: 'ok' })
})

test('the handler reads and limits bodies itself, whatever their media type', async () => {
  const created = await fetch(`${url}/v1/notes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '"not parsed by Fastify"',
  })
  expect(created.status).toBe(201)
  expect(((await created.json()) as { text: string }).text).toBe('"not parsed by Fastify"')
  const tooLong = await fetch(`${url}/v1/notes`, { method: 'POST', body: 'x'.repeat(2000) })
  expect(tooLong.status).toBe(413)
})

test('thrown problems become application/problem+json', async () => {
  const missing = await fetch(`${url}/v1/nothing`)
  expect(missing.status).toBe(404)
  expect(missing.headers.get('content-type')).toBe('application/problem+json')
})
