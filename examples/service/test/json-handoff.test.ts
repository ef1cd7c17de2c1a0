// Over a real socket, through @api-blocks/node: the idempotency middleware reads the body from
// the stream, hands the bytes back to the same request (restore-body slot), and leaves the JSON
// it parsed for the fingerprint in the parsed-JSON slot, which readJson then takes instead of
// parsing the body a second time.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { readJson } from '@api-blocks/http'
import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { serve } from '@api-blocks/node'
import { afterAll, expect, test } from 'vitest'
import { z } from 'zod'

const JSON_BODY = Symbol.for('api-blocks.json-body')
const seen: { slot: unknown; value: unknown }[] = []
const middleware = idempotency({ store: new MemoryIdempotencyStore(), scope: 'test' })
const server = serve(
  (request) =>
    middleware(request, async (forwarded) => {
      const slot = (forwarded as unknown as Record<symbol, { value: unknown } | undefined>)[
        JSON_BODY
      ]
      const value = await readJson(forwarded, z.unknown())
      seen.push({ slot: slot?.value, value })
      return Response.json({ ok: true }, { status: 201 })
    }),
  // The lightweight Request is what takes the bytes back (restoreBody), as src/main.ts serves it.
  { port: 0, hostname: '127.0.0.1', lightweight: true },
)
await once(server, 'listening')
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
afterAll(() => new Promise((resolve) => server.close(resolve)))

const post = (key: string | null, body: string) =>
  fetch(base, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { 'idempotency-key': key }),
    },
    body,
  })

test('the JSON parsed for the fingerprint is the value readJson answers: parsed once', async () => {
  expect((await post('k1', '{"b":[1,2],"a":"x"}')).status).toBe(201)
  expect(seen[0]?.value).toEqual({ b: [1, 2], a: 'x' })
  expect(seen[0]?.value).toBe(seen[0]?.slot)
})

test('without a key the body is read and parsed by readJson alone', async () => {
  expect((await post(null, '{"a":1}')).status).toBe(201)
  expect(seen[1]).toEqual({ slot: undefined, value: { a: 1 } })
})
