import { once } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { inspect } from 'node:util'
import { restoreBody, wholeBodyOf } from '@api-blocks/core'
import { afterEach, describe, expect, test } from 'vitest'
import type { Listening } from '../../test/start.ts'
import { listen } from '../../test/start.ts'
import { FastRequest, installLightweightGlobals } from '../lightweight.ts'
import { IncomingRequest } from './incoming-request.ts'
import { NativeRequest } from './native.ts'

// The lazy request goes with the lightweight globals (new Request(request) unwraps it).
installLightweightGlobals()

/** A server that hands each request to `inspect` and answers what it returns (or 204). */
async function capture(
  check: (request: Request, req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
): Promise<Listening> {
  return listen(async (req, res) => {
    const url = `http://${req.headers.host}${req.url}`
    const request = new IncomingRequest(req, res, req.method!, url, undefined) as unknown as Request
    try {
      const result = await check(request, req, res)
      if (!res.headersSent) res.end(JSON.stringify(result ?? null))
    } catch (error) {
      res.statusCode = 500
      res.end(String(error))
    }
  })
}

let running: Listening | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

describe('IncomingRequest behaves as the native Request', () => {
  test('implements every member of Request.prototype itself', () => {
    const own = Object.getOwnPropertyNames(IncomingRequest.prototype)
    for (const name of Object.getOwnPropertyNames(NativeRequest.prototype)) {
      // undici's prototype carries a stray `attribute: undefined` data property.
      if (name !== 'attribute') expect(own, name).toContain(name)
    }
  })

  test('every accessor answers what a native Request built from the same parts answers', async () => {
    const names = Object.getOwnPropertyNames(NativeRequest.prototype).filter((name) => {
      const descriptor = Object.getOwnPropertyDescriptor(NativeRequest.prototype, name)
      return descriptor?.get !== undefined && !['body', 'headers', 'signal'].includes(name)
    })
    running = await capture(async (request) => {
      const native = new NativeRequest(request.url, {
        method: request.method,
        headers: request.headers,
        body: new ReadableStream(),
        duplex: 'half',
      } as RequestInit)
      for (const name of names) {
        expect((request as never)[name], name).toEqual((native as never)[name])
      }
      expect([...request.headers]).toEqual([...native.headers])
      return names.length
    })
    const response = await fetch(`${running.url}/p?q=1`, { method: 'POST', body: 'x' })
    expect(await response.json()).toBeGreaterThan(10)
  })

  test('keeps repeated header lines, joined as undici Headers joins them (Cookie with ; )', async () => {
    running = await capture(async (request) => ({
      dup: request.headers.get('x-dup'),
      cookie: request.headers.get('cookie'),
    }))
    const { port } = new URL(running.url)
    const socket = connect(Number(port), '127.0.0.1')
    socket.end(
      'GET / HTTP/1.1\r\nHost: x\r\nX-Dup: a\r\nX-Dup: b\r\nCookie: c=1\r\nCookie: d=2\r\n' +
        'Connection: close\r\n\r\n',
    )
    let raw = ''
    for await (const chunk of socket) raw += chunk
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      dup: 'a, b',
      cookie: 'c=1; d=2',
    })
  })

  test('reads the body with every Body method', async () => {
    running = await capture(async (request) => {
      const copies = [0, 1, 2, 3].map(() => request.clone())
      return {
        text: await request.text(),
        json: await copies[0]!.json(),
        bytes: [...(await copies[1]!.bytes()).subarray(0, 3)],
        blobType: (await copies[2]!.blob()).type,
        arrayBuffer: (await copies[3]!.arrayBuffer()).byteLength,
      }
    })
    const response = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(await response.json()).toEqual({
      text: '{"a":1}',
      json: { a: 1 },
      bytes: [123, 34, 97],
      blobType: 'application/json',
      arrayBuffer: 7,
    })
  })

  test('formData() parses a urlencoded body', async () => {
    running = await capture(async (request) => Object.fromEntries(await request.formData()))
    const response = await fetch(running.url, {
      method: 'POST',
      body: new URLSearchParams('a=1&b=two'),
    })
    expect(await response.json()).toEqual({ a: '1', b: 'two' })
  })

  test('a body reads once: bodyUsed, then TypeError, as natively', async () => {
    running = await capture(async (request) => {
      const before = request.bodyUsed
      await request.text()
      const after = request.bodyUsed
      const again = await request
        .text()
        .catch((error: unknown) => (error as Error).constructor.name)
      const clone = (() => {
        try {
          request.clone()
          return 'cloned'
        } catch (error) {
          return (error as Error).constructor.name
        }
      })()
      return { before, after, again, clone }
    })
    const response = await fetch(running.url, { method: 'PUT', body: 'once' })
    expect(await response.json()).toEqual({
      before: false,
      after: true,
      again: 'TypeError',
      clone: 'TypeError',
    })
  })

  test('GET and HEAD have no body', async () => {
    running = await capture(async (request) => ({
      body: request.body,
      text: await request.text(),
    }))
    expect(await (await fetch(running.url)).json()).toEqual({ body: null, text: '' })
  })

  test('new Request(request, init) makes a native Request that takes the body over', async () => {
    running = await capture(async (request) => {
      expect(globalThis.Request).toBe(FastRequest)
      const copy = new Request(request, { headers: { 'x-added': 'yes' } })
      const replaced = new Request(request, { method: 'PUT', body: 'replacement' })
      return {
        nativeCopy: copy instanceof NativeRequest && !(copy instanceof IncomingRequest),
        url: copy.url,
        method: copy.method,
        header: copy.headers.get('x-added'),
        text: await copy.text(),
        replaced: await replaced.text(),
        originalUsed: request.bodyUsed,
      }
    })
    const response = await fetch(`${running.url}/copy?x=1`, { method: 'POST', body: 'moved' })
    expect(await response.json()).toEqual({
      nativeCopy: true,
      url: `${running.url}/copy?x=1`,
      method: 'POST',
      header: 'yes',
      text: 'moved',
      replaced: 'replacement',
      originalUsed: true,
    })
  })

  test('new Request(request, { body: bytes }) stays lightweight, as a native copy would behave', async () => {
    running = await capture(async (request) => {
      request.headers.set('x-changed', 'before the copy')
      const bytes = new Uint8Array(await request.arrayBuffer())
      const copy = new Request(request, { body: bytes })
      return {
        lightweight: copy instanceof IncomingRequest,
        isRequest: copy instanceof Request,
        url: copy.url,
        method: copy.method,
        type: copy.headers.get('content-type'),
        changed: copy.headers.get('x-changed'),
        text: await copy.text(),
        usedAfterRead: copy.bodyUsed,
        aborted: copy.signal.aborted,
      }
    })
    const response = await fetch(`${running.url}/rebody?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(await response.json()).toEqual({
      lightweight: true,
      isRequest: true,
      url: `${running.url}/rebody?x=1`,
      method: 'POST',
      type: 'application/json',
      changed: 'before the copy',
      text: '{"a":1}',
      usedAfterRead: true,
      aborted: false,
    })
  })

  test('new Request(request, { body: bytes }) copies the bytes, and refuses a body on GET, as native does', async () => {
    running = await capture(async (request) => {
      const bytes = new TextEncoder().encode('hello')
      const copy = new Request(request, { body: bytes })
      bytes.fill(65)
      return await copy.text()
    })
    const posted = await fetch(`${running.url}/copy`, { method: 'POST', body: 'ignored' })
    expect(await posted.json()).toBe('hello')
    await running.close()
    running = await capture(async (request) => {
      try {
        new Request(request, { body: new Uint8Array([1]) })
        return 'accepted'
      } catch (error) {
        return (error as Error).name
      }
    })
    expect(await (await fetch(`${running.url}/get`)).json()).toBe('TypeError')
  })

  test('a body held in memory is read whole without a stream, as a native Request reads it', async () => {
    const samples = [
      new TextEncoder().encode('\ufeff{"a":"é"}'), // a BOM, stripped by text() and json()
      new Uint8Array([0x7b, 0xff, 0x7d]), // invalid UTF-8: text() replaces, json() rejects
      new Uint8Array(0),
    ]
    running = await capture(async (request) => {
      const results = []
      for (const bytes of samples) {
        for (const method of ['bytes', 'arrayBuffer', 'text', 'json'] as const) {
          const copy = new Request(request, { body: bytes })
          const native = new NativeRequest('http://x.test/', { method: 'POST', body: bytes })
          const slot = wholeBodyOf(copy)
          const read = async (from: Request) => {
            try {
              const value: unknown = await from[method]()
              return value instanceof ArrayBuffer ? [...new Uint8Array(value)] : value
            } catch (error) {
              return (error as Error).name
            }
          }
          const ours = await read(copy)
          results.push({
            same: JSON.stringify(ours) === JSON.stringify(await read(native)),
            slotBefore: slot instanceof Uint8Array,
            slotAfter: wholeBodyOf(copy),
            used: copy.bodyUsed,
            again: await copy.text().then(
              () => 'read twice',
              (error: Error) => error.name,
            ),
            stream: copy.body?.locked,
          })
        }
      }
      return results
    })
    const results = (await (
      await fetch(`${running.url}/whole`, { method: 'POST', body: 'x' })
    ).json()) as unknown[]
    expect(results).toHaveLength(12)
    for (const result of results) {
      expect(result).toEqual({
        same: true,
        slotBefore: true,
        slotAfter: undefined,
        used: true,
        again: 'TypeError',
        stream: true,
      })
    }
  })

  test('bytes a framework read into a pooled Buffer come back as an exact copy, never the pool', async () => {
    running = await capture(async (_request, req, res) => {
      const url = `http://${req.headers.host}${req.url}`
      // What the Express and Fastify adapters hand over: a small Buffer, cut from Node's pool.
      const pooled = () => Buffer.from('{"a":1}')
      const fromFramework = (body: Uint8Array) =>
        new IncomingRequest(req, res, 'POST', url, body) as unknown as Request
      const buffer = await fromFramework(pooled()).arrayBuffer()
      const bytes = await fromFramework(pooled()).bytes()
      const source = pooled()
      const copy = new Request(fromFramework(pooled()), { body: source })
      source.fill(0x20)
      // A re-bodied request keeps its copy in the pool: every way out is a buffer of its own.
      const rebodied = () => new Request(fromFramework(pooled()), { body: pooled() })
      const { value: chunk } = await (rebodied().body as ReadableStream<Uint8Array>)
        .getReader()
        .read()
      const cloned = await rebodied().clone().bytes()
      return {
        bufferLength: buffer.byteLength,
        bytesIsBuffer: Buffer.isBuffer(bytes),
        bytesLength: bytes.buffer.byteLength,
        copied: await copy.text(),
        rebodied: [
          (await rebodied().bytes()).buffer.byteLength,
          (await rebodied().arrayBuffer()).byteLength,
          chunk?.buffer.byteLength,
          cloned.buffer.byteLength,
        ],
      }
    })
    const response = await fetch(`${running.url}/pooled`, { method: 'POST', body: 'x' })
    expect(await response.json()).toEqual({
      bufferLength: 7,
      bytesIsBuffer: false,
      bytesLength: 7,
      copied: '{"a":1}',
      rebodied: [7, 7, 7, 7],
    })
  })

  test('wholeBodyOf is empty once the body is a stream, and on GET', async () => {
    running = await capture(async (request) => {
      const copy = new Request(request, { body: new Uint8Array([1, 2]) })
      void copy.body
      return {
        afterStream: wholeBodyOf(copy) ?? 'none',
        incoming: wholeBodyOf(request) ?? 'none',
        streamed: [...(await copy.bytes())],
      }
    })
    const response = await fetch(`${running.url}/s`, { method: 'POST', body: 'y' })
    expect(await response.json()).toEqual({
      afterStream: 'none',
      incoming: 'none',
      streamed: [1, 2],
    })
  })

  test('restoreBody: bytes read from the stream are taken back, and the body reads again from them', async () => {
    running = await capture(async (request) => {
      const early = restoreBody(request, new Uint8Array([1]))
      const read = await request.bytes()
      const notBytes = restoreBody(request, 'text' as unknown as Uint8Array)
      const taken = restoreBody(request, read)
      const state = {
        used: request.bodyUsed,
        slotIsRead: wholeBodyOf(request) === read,
      }
      const text = await request.text()
      return { early, notBytes, taken, ...state, text, usedAfter: request.bodyUsed }
    })
    const response = await fetch(`${running.url}/r`, { method: 'POST', body: '{"a":1}' })
    expect(await response.json()).toEqual({
      early: false, // nothing read yet: refused, nothing changed
      notBytes: false,
      taken: true,
      used: false,
      slotIsRead: true,
      text: '{"a":1}',
      usedAfter: true,
    })
    await running.close()
    running = await capture(async (request) => ({
      get: restoreBody(request, new Uint8Array([1])),
    }))
    expect(await (await fetch(`${running.url}/g`)).json()).toEqual({ get: false })
    await running.close()
    // Bytes given up in a buffer of their own come back from bytes() as they are; a view is copied.
    running = await capture(async (request) => {
      await request.arrayBuffer()
      const own = new Uint8Array([1, 2, 3])
      restoreBody(request, own)
      const same = (await request.bytes()) === own
      return { same }
    })
    expect(await (await fetch(`${running.url}/o`, { method: 'POST', body: 'x' })).json()).toEqual({
      same: true,
    })
    await running.close()
    running = await capture(async (request) => {
      await request.arrayBuffer()
      const view = new Uint8Array([9, 1, 2, 3, 9]).subarray(1, 4)
      restoreBody(request, view)
      const bytes = await request.bytes()
      return { copied: bytes !== view, exact: bytes.buffer.byteLength, values: [...bytes] }
    })
    expect(await (await fetch(`${running.url}/v`, { method: 'POST', body: 'x' })).json()).toEqual({
      copied: true,
      exact: 3,
      values: [1, 2, 3],
    })
  })

  test('instanceof Request holds for it and for native requests', async () => {
    running = await capture(async (request) => [
      request instanceof Request,
      new NativeRequest('http://x/') instanceof Request,
      {} instanceof Request,
      Request.name,
    ])
    expect(await (await fetch(running.url)).json()).toEqual([true, true, false, 'Request'])
  })

  test('inspects like a Request', async () => {
    running = await capture(async (request) => inspect(request))
    expect(await (await fetch(`${running.url}/seen`)).json()).toMatch(/^Request .*\/seen/s)
  })

  test('fetch(request) needs a native copy: pass new Request(request) (documented limit)', async () => {
    running = await capture(async (request) => {
      const direct = await fetch(request).then(
        () => 'sent',
        (error: unknown) => (error as Error).constructor.name,
      )
      return direct
    })
    expect(await (await fetch(running.url)).json()).toBe('TypeError')
  })
})

describe('the AbortSignal', () => {
  async function disconnectWhileWaiting(readSignalFirst: boolean) {
    let settle!: (aborted: boolean) => void
    const outcome = new Promise<boolean>((resolve) => {
      settle = resolve
    })
    running = await capture(async (request, _req, res) => {
      const early = readSignalFirst ? request.signal : undefined
      await once(res, 'close')
      const signal = early ?? request.signal
      settle(signal.aborted)
    })
    const client = httpRequest(`${running.url}/wait`, { agent: false })
    client.on('error', () => {})
    client.end()
    await once(client, 'socket')
    await once(client, 'finish')
    client.destroy()
    return outcome
  }

  test('fires when the client disconnects before the response', async () => {
    expect(await disconnectWhileWaiting(true)).toBe(true)
  })

  test('is already aborted when first read after the client disconnected', async () => {
    expect(await disconnectWhileWaiting(false)).toBe(true)
  })

  test('does not fire when the response completes', async () => {
    let signal: AbortSignal | undefined
    running = await listen((req, res) => {
      const request = new IncomingRequest(req, res, 'GET', 'http://x/', undefined)
      signal = request.signal
      res.end('done')
    })
    const response = await fetch(running.url)
    expect(await response.text()).toBe('done')
    await running.close()
    running = undefined
    expect(signal?.aborted).toBe(false)
  })
})
