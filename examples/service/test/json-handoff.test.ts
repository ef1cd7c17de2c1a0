// Over a real socket, through @api-blocks/node: the idempotency middleware reads the body from
// the stream, hands the bytes back to the same request (restoreBody), and hands on the JSON it
// parsed for the fingerprint (handOnParsedJson of @api-blocks/core), which readJson takes
// instead of parsing the body a second time (takeParsedJson: what readJson calls; taken here
// first, to see what was handed on).
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { takeParsedJson } from '@api-blocks/core'
import { readJson } from '@api-blocks/http'
import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { serve } from '@api-blocks/node'
import { afterAll, expect, test } from 'vitest'
import { z } from 'zod'

const seen: { handed: unknown; same: boolean; value: unknown }[] = []
const middleware = idempotency({ store: new MemoryIdempotencyStore(), scope: 'test' })
const server = serve(
  (request) =>
    middleware(request, async (forwarded) => {
      const handed = takeParsedJson(forwarded)
      const value = await readJson(forwarded, z.unknown())
      seen.push({ handed: handed?.value, same: forwarded === request, value })
      return Response.json({ ok: true }, { status: 201 })
    }),
  { port: 0, hostname: '127.0.0.1' },
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

test('the JSON parsed for the fingerprint is handed on with the request itself, which still reads the same body', async () => {
  expect((await post('k1', '{"b":[1,2],"a":"x"}')).status).toBe(201)
  expect(seen[0]).toEqual({
    handed: { b: [1, 2], a: 'x' },
    same: true,
    value: { b: [1, 2], a: 'x' },
  })
})

test('without a key the body is read and parsed by readJson alone', async () => {
  expect((await post(null, '{"a":1}')).status).toBe(201)
  expect(seen[1]).toEqual({ handed: undefined, same: true, value: { a: 1 } })
})
