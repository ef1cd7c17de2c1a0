// The body of the lightweight request read whole straight from the IncomingMessage
// (readIncomingBody), against the stream it stands in for: same bytes, same failures, same
// limits, and the plain stream path when there is no Content-Length.
import { once } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { type BodyReadError, readRequestBody, readWholeBody } from '@api-blocks/core'
import { afterEach, expect, test } from 'vitest'
import type { Listening } from '../../test/start.ts'
import { listen } from '../../test/start.ts'
import { NodeAdapterError } from '../errors.ts'
import { installLightweightGlobals } from '../lightweight.ts'
import { IncomingRequest } from './incoming-request.ts'

installLightweightGlobals()

let running: Listening | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

type Check = (request: Request, req: IncomingMessage, res: ServerResponse) => Promise<unknown>

async function capture(check: Check): Promise<Listening> {
  return listen(async (req, res) => {
    const request = new IncomingRequest(req, res, req.method!, 'http://x/', undefined)
    try {
      const result = await check(request as unknown as Request, req, res)
      if (!res.headersSent) res.end(JSON.stringify(result ?? null))
    } catch (error) {
      res.statusCode = 500
      res.end(error instanceof Error ? `${error.constructor.name} ${error.message}` : String(error))
    }
  })
}

/** Sends `head` then each of `parts` on a raw socket, a pause between; answers the reply. */
async function raw(head: string, ...parts: string[]): Promise<string> {
  const { port } = new URL(running!.url)
  const socket = connect(Number(port), '127.0.0.1')
  const closed = once(socket, 'close')
  // The server may answer and close before every part was sent.
  socket.on('error', () => {})
  let reply = ''
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    reply += chunk
  })
  socket.write(head)
  for (const part of parts) {
    await sleep(30)
    if (!socket.destroyed) socket.write(part)
  }
  await closed
  return reply
}

const post = (length: number | undefined, extra = '') =>
  `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${length === undefined ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`}${extra}\r\n`

const bodyOf = (reply: string) => reply.slice(reply.indexOf('\r\n\r\n') + 4)

test('text(), json(), bytes() and arrayBuffer() read a Content-Length body whole, once', async () => {
  const methods = ['text', 'json', 'bytes', 'arrayBuffer'] as const
  const results: unknown[] = []
  running = await capture(async (request) => {
    const method = methods[results.length]!
    const value = await request[method]()
    results.push(
      value instanceof ArrayBuffer || value instanceof Uint8Array
        ? [...new Uint8Array(value)]
        : value,
    )
    const again = await request.text().catch((error: unknown) => (error as Error).name)
    // The body reads as used, and its stream does not read the IncomingMessage again.
    const stream = request.body!
    return { used: request.bodyUsed, again, locked: stream.locked }
  })
  for (const _ of methods) {
    expect(JSON.parse(bodyOf(await raw(post(7), '{"a":1}')))).toEqual({
      used: true,
      again: 'TypeError',
      locked: true,
    })
  }
  expect(results).toEqual([
    '{"a":1}',
    { a: 1 },
    [...Buffer.from('{"a":1}')],
    [...Buffer.from('{"a":1}')],
  ])
})

test('a body arriving in pieces after the header section is read whole', async () => {
  running = await capture(async (request) => request.text())
  const reply = await raw(post(12), 'hello ', 'world', '!')
  expect(JSON.parse(bodyOf(reply))).toBe('hello world!')
})

test('readRequestBody takes the direct read within the limit, and answers the bytes', async () => {
  running = await capture(async (request) => {
    // Over the limit or without a Content-Length the slot declines: core reads the stream.
    const declined = readWholeBody(request, 3) === undefined
    const bytes = await readRequestBody(request, { maxBytes: 64 })
    return { declined, text: Buffer.from(bytes).toString(), used: request.bodyUsed }
  })
  const reply = await raw(post(10), 'grant', '_type')
  expect(JSON.parse(bodyOf(reply))).toEqual({ declined: true, text: 'grant_type', used: true })
})

test('MUST refuse a Content-Length over the limit with 413 before reading (RFC 9110 §15.5.14)', async () => {
  running = await capture(async (request) => {
    const error = await readRequestBody(request, { maxBytes: 4 }).catch((e: unknown) => e)
    return [(error as BodyReadError).code, (error as BodyReadError).status]
  })
  const reply = await raw(post(10), '0123456789')
  expect(JSON.parse(bodyOf(reply))).toEqual(['BODY_TOO_LARGE', 413])
})

test('the plain path: a chunked body is read through the stream, within the limit', async () => {
  running = await capture(async (request) => {
    const declined = readWholeBody(request, 1024) === undefined
    const bytes = await readRequestBody(request, { maxBytes: 8 }).catch(
      (error: unknown) => (error as BodyReadError).code,
    )
    return { declined, result: typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString() }
  })
  const small = await raw(post(undefined), '3\r\nabc\r\n', '2\r\nde\r\n0\r\n\r\n')
  expect(JSON.parse(bodyOf(small))).toEqual({ declined: true, result: 'abcde' })
  const large = await raw(post(undefined), '6\r\nabcdef\r\n', '6\r\nghijkl\r\n0\r\n\r\n')
  expect(JSON.parse(bodyOf(large))).toEqual({ declined: true, result: 'BODY_TOO_LARGE' })
})

test('a client hanging up mid-body fails the read with REQUEST_ABORTED', async () => {
  let failure: unknown
  const failed = new Promise<void>((resolve) => {
    running = undefined
    void capture(async (request) => {
      failure = await request.text().catch((error: unknown) => error)
      resolve()
    }).then((listening) => {
      running = listening
      const { port } = new URL(listening.url)
      const socket = connect(Number(port), '127.0.0.1')
      socket.write(post(100))
      socket.write('only part')
      setTimeout(() => socket.destroy(), 30)
    })
  })
  await failed
  expect(failure).toBeInstanceOf(NodeAdapterError)
  expect((failure as NodeAdapterError).code).toBe('REQUEST_ABORTED')
})

test('a response sent before the body ended fails the read and drops the rest', async () => {
  let failure: unknown
  running = await capture(async (request, _req, res) => {
    const read = request.text().catch((error: unknown) => error)
    res.end('early')
    failure = await read
    return undefined
  })
  const reply = await raw(post(10), '01234', '56789')
  expect(bodyOf(reply)).toBe('early')
  expect((failure as NodeAdapterError).code).toBe('REQUEST_ABORTED')
})

test('request.body asked for first stays a stream of the IncomingMessage', async () => {
  running = await capture(async (request) => {
    const chunks: string[] = []
    for await (const chunk of request.body!) chunks.push(Buffer.from(chunk).toString())
    return { text: chunks.join(''), used: request.bodyUsed }
  })
  expect(JSON.parse(bodyOf(await raw(post(6), 'abc', 'def')))).toEqual({
    text: 'abcdef',
    used: true,
  })
})
