// Over a real socket, through @api-blocks/node: the idempotency middleware reads the body from
// the stream, hands the bytes back to the same request (restoreBody), and hands on the JSON it
// parsed for the fingerprint (handOnParsedJson of @api-blocks/core), which readJson takes
// instead of parsing the body a second time (takeParsedJson).
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { readJson } from '@api-blocks/http'
import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { serve } from '@api-blocks/node'
import { afterAll, expect, test, vi } from 'vitest'
import { z } from 'zod'

const seen: { same: boolean; value: unknown }[] = []
const middleware = idempotency({ store: new MemoryIdempotencyStore(), scope: 'test' })
const server = serve(
  (request) =>
    middleware(request, async (forwarded) => {
      const value = await readJson(forwarded, z.unknown())
      seen.push({ same: forwarded === request, value })
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

// What JSON.parse was asked to parse while `run` ran.
async function parsedTexts(run: () => Promise<void>): Promise<unknown[]> {
  const parse = vi.spyOn(JSON, 'parse')
  try {
    await run()
    return parse.mock.calls.map(([text]) => text)
  } finally {
    parse.mockRestore()
  }
}

test('the body is parsed once: readJson answers the value parsed for the fingerprint, on the request itself', async () => {
  const body = '{"b":[1,2],"a":"x"}'
  const texts = await parsedTexts(async () => {
    expect((await post('k1', body)).status).toBe(201)
  })
  expect(texts.filter((text) => text === body)).toHaveLength(1)
  expect(seen[0]).toEqual({ same: true, value: { b: [1, 2], a: 'x' } })
})

test('without a key the body is read and parsed by readJson alone', async () => {
  expect((await post(null, '{"a":1}')).status).toBe(201)
  expect(seen[1]).toEqual({ same: true, value: { a: 1 } })
})
