/**
 * The behaviour every adapter shows on its real framework. Each test checks one rule of
 * `adapterRules` and is titled with its id and RFC 2119 level; tests talk HTTP to a server
 * listening on 127.0.0.1.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Handler } from '@api-blocks/core'
import { PROBLEM_MEDIA_TYPE } from '@api-blocks/problem-details'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { fieldValues, hangUpAfterFirstChunk, postOnNewConnection, rawExchange } from './client.ts'
import type { SuiteState } from './handler.ts'
import { BODY_LIMIT_BYTES, gate, suiteHandler } from './handler.ts'
import { adapterRules, ruleTitle } from './rules.ts'

/**
 * A server under test: where it listens and how to stop it.
 *
 * @example
 * ```ts
 * const started: StartedServer = { url: 'http://127.0.0.1:49152', close: async () => {} }
 * ```
 */
export interface StartedServer {
  /** The origin, e.g. `http://127.0.0.1:49152`, without a trailing slash. */
  readonly url: string
  close(): Promise<void>
}

/**
 * Starts the framework on 127.0.0.1 port 0, serving `handler` for every path.
 *
 * @example
 * ```ts
 * const start: StartServer = async (handler) => listen(toNodeListener(handler))
 * ```
 */
export type StartServer = (handler: Handler) => Promise<StartedServer>

const MiB = 1024 * 1024

/**
 * Options of {@link runAdapterSuite}.
 *
 * @example
 * ```ts
 * const options: AdapterSuiteOptions = { exceptions: { 'head-length': 'the server omits it on HEAD' } }
 * ```
 */
export interface AdapterSuiteOptions {
  /**
   * SHOULD rules this server is known not to meet, by id, each with the reason. Their tests
   * are expected to fail (`test.fails`, the reason in the title), so a server that starts
   * meeting the rule is noticed. A MUST rule cannot be excepted.
   */
  exceptions?: Readonly<Record<string, string>>
}

/**
 * Registers the behaviour suite as a vitest `describe` block named `name`, run against
 * the server `start` returns. Every rule of `adapterRules` is one test.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { once } from 'node:events'
 * import { runAdapterSuite } from '@api-blocks/adapter-suite'
 * import { toNodeListener } from '@api-blocks/node'
 *
 * runAdapterSuite('node', async (handler) => {
 *   const server = createServer(toNodeListener(handler)).listen(0, '127.0.0.1')
 *   await once(server, 'listening')
 *   const { port } = server.address() as { port: number }
 *   return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) }
 * })
 * ```
 */
export function runAdapterSuite(
  name: string,
  start: StartServer,
  options: AdapterSuiteOptions = {},
): void {
  const exceptions = options.exceptions ?? {}
  for (const id of Object.keys(exceptions)) {
    const rule = adapterRules.find((candidate) => candidate.id === id)
    if (rule?.level !== 'SHOULD') {
      throw new Error(`Only a SHOULD rule can be excepted; "${id}" is ${rule?.level ?? 'no rule'}`)
    }
  }
  describe(`adapter behaviour: ${name}`, () => {
    const state: SuiteState = { gates: new Map(), disconnects: new Map() }
    let server: StartedServer
    let ids = 0
    const nextId = () => `${++ids}`
    // One test per rule, titled `[id] LEVEL rule`, so a failure names the rule it broke.
    const checked = new Set<string>()
    const check = (id: string, run: () => Promise<void>) => {
      checked.add(id)
      const exception = exceptions[id]
      if (exception === undefined) test(ruleTitle(id), run)
      else test.fails(`${ruleTitle(id)} (known exception: ${exception})`, run)
    }

    beforeAll(async () => {
      server = await start(suiteHandler(state))
    })
    afterAll(async () => {
      await server?.close()
    })

    check('status-code', async () => {
      for (const status of [200, 201, 404, 418, 503]) {
        const response = await fetch(`${server.url}/status/${status}`)
        expect(response.status).toBe(status)
        expect(await response.text()).toBe(`status ${status}`)
      }
      const redirect = await fetch(`${server.url}/status/302`, { redirect: 'manual' })
      expect(redirect.status).toBe(302)
      expect(redirect.headers.get('location')).toBe('/elsewhere')
    })

    check('set-cookie-lines', async () => {
      const response = await fetch(`${server.url}/headers`)
      expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/; HttpOnly'])
      const raw = await rawExchange(server.url, 'GET /headers HTTP/1.1')
      expect(fieldValues(raw, 'set-cookie')).toEqual(['a=1; Path=/', 'b=2; Path=/; HttpOnly'])
    })

    check('repeated-fields', async () => {
      const response = await fetch(`${server.url}/headers`)
      expect(response.headers.get('x-multi')).toBe('one, two')
      const raw = await rawExchange(server.url, 'GET /headers HTTP/1.1')
      // RFC 9110 §5.3: one line with a comma-separated list or one line per value.
      expect(fieldValues(raw, 'x-multi').join(', ')).toBe('one, two')
    })

    check('stream-chunks', async () => {
      const id = nextId()
      const paced = gate()
      state.gates.set(id, paced)
      const response = await fetch(`${server.url}/stream?id=${id}`)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      // The handler holds the rest of the body until the first chunk has arrived here: an
      // adapter that buffers the whole body never delivers it, and this test times out.
      let text = decoder.decode((await reader.read()).value, { stream: true })
      expect(text).toBe('alpha;')
      paced.open()
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        text += decoder.decode(next.value, { stream: true })
      }
      expect(text).toBe('alpha;beta;gamma;delta')
    })

    check('large-body', async () => {
      const total = 4 * MiB + 17
      const response = await fetch(`${server.url}/large/${total}`)
      const body = new Uint8Array(await response.arrayBuffer())
      expect(body.byteLength).toBe(total)
      const expected = new Uint8Array(64 * 1024).map((_, i) => i % 251)
      for (let offset = 0; offset < total; offset += expected.byteLength) {
        const part = body.subarray(offset, offset + expected.byteLength)
        expect(Buffer.compare(part, expected.subarray(0, part.byteLength))).toBe(0)
      }
    })

    check('whole-body-length', async () => {
      const raw = await rawExchange(server.url, 'GET /text HTTP/1.1')
      expect(fieldValues(raw, 'content-length')).toEqual(['11'])
      expect(fieldValues(raw, 'transfer-encoding')).toEqual([])
      expect(raw.rest.toString()).toBe('hello, head')
    })

    check('no-content', async () => {
      const raw = await rawExchange(server.url, 'GET /status/204 HTTP/1.1')
      expect(raw.statusLine).toMatch(/^HTTP\/1\.1 204 /)
      expect(fieldValues(raw, 'content-length')).toEqual([])
      expect(fieldValues(raw, 'transfer-encoding')).toEqual([])
      expect(raw.rest.byteLength).toBe(0)
    })

    check('head', async () => {
      const raw = await rawExchange(server.url, 'HEAD /text HTTP/1.1')
      expect(raw.statusLine).toMatch(/^HTTP\/1\.1 200 /)
      expect(fieldValues(raw, 'content-type')).toEqual(['text/plain'])
      expect(raw.rest.byteLength).toBe(0)
      const head = await fetch(`${server.url}/text`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe('')
    })

    check('head-length', async () => {
      const raw = await rawExchange(server.url, 'HEAD /text HTTP/1.1')
      expect(fieldValues(raw, 'content-length')).toEqual(['11'])
      expect(raw.rest.byteLength).toBe(0)
    })

    check('request-headers', async () => {
      const response = await fetch(`${server.url}/request-id`, {
        headers: { 'x-request-id': 'req-7f3a9c' },
      })
      expect(response.status).toBe(204)
      expect(response.headers.get('x-request-id')).toBe('req-7f3a9c')
    })

    check('request-body', async () => {
      const bytes = randomBytes(MiB)
      const expected = { length: MiB, sha256: createHash('sha256').update(bytes).digest('hex') }
      const whole = await fetch(`${server.url}/digest`, { method: 'POST', body: bytes })
      expect(await whole.json()).toEqual(expected)
      // Chunked transfer coding, in uneven pieces.
      const pieces = [0, 1, 1000, 65_537, 500_000, MiB].map((at, i, all) =>
        bytes.subarray(at, all[i + 1] ?? at),
      )
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) if (piece.byteLength > 0) controller.enqueue(piece)
          controller.close()
        },
      })
      const streamed = await fetch(`${server.url}/digest`, {
        method: 'POST',
        body,
        duplex: 'half',
      } as RequestInit)
      expect(await streamed.json()).toEqual(expected)
    })

    check('body-limit', async () => {
      const response = await postOnNewConnection(`${server.url}/limited`, randomBytes(MiB))
      expect(response.status).toBe(413)
      expect(response.headers['content-type']).toBe(PROBLEM_MEDIA_TYPE)
      expect(JSON.parse(response.body)).toMatchObject({ status: 413, max_bytes: BODY_LIMIT_BYTES })
      const small = await fetch(`${server.url}/limited`, { method: 'POST', body: 'short' })
      expect(await small.json()).toEqual({ length: 5 })
    })

    check('thrown-problem', async () => {
      const response = await fetch(`${server.url}/problem`)
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toBe(PROBLEM_MEDIA_TYPE)
      expect(await response.json()).toMatchObject({
        status: 404,
        detail: 'There is no such widget.',
      })
    })

    check('thrown-error', async () => {
      const response = await fetch(`${server.url}/crash`)
      expect(response.status).toBe(500)
      expect(response.headers.get('content-type')).toBe(PROBLEM_MEDIA_TYPE)
      const text = await response.text()
      expect(text).not.toMatch(/hunter2|secret|database/)
      expect(JSON.parse(text)).toMatchObject({ status: 500 })
    })

    check('client-disconnect', async () => {
      const id = nextId()
      const watch = { cancelled: gate(), aborted: gate() }
      state.disconnects.set(id, watch)
      expect(await hangUpAfterFirstChunk(`${server.url}/endless?id=${id}`)).toMatch(/^tick/)
      // Both hang (and the test times out) if the adapter keeps pulling from the handler.
      await watch.cancelled.promise
      await watch.aborted.promise
      const after = await fetch(`${server.url}/status/200`)
      expect(after.status).toBe(200)
    })

    check('url-as-sent', async () => {
      const target = '/echo-url/a%20b/%E2%9C%93/x%2Fy?q=1&r=a%26b&s=%F0%9F%8D%95'
      const response = await fetch(`${server.url}${target}`)
      const { url, method } = (await response.json()) as { url: string; method: string }
      expect(method).toBe('GET')
      expect(url).toBe(`${server.url}${target}`)
    })

    // Every rule has its test: a rule added without one fails here, when the suite registers.
    const unchecked = adapterRules.filter((rule) => !checked.has(rule.id))
    if (unchecked.length > 0) {
      throw new Error(
        `Adapter rules without a test: ${unchecked.map((rule) => rule.id).join(', ')}`,
      )
    }
  })
}
