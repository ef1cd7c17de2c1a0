/**
 * The Fetch handler the behaviour suite serves through every adapter: one route per
 * behaviour, plus hooks the tests use to pace streams and observe cancellation.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { Handler } from '@api-blocks/core'
import { problems, toProblemResponse } from '@api-blocks/problem-details'

/**
 * The body limit the `/limited` route enforces.
 *
 * @example
 * ```ts
 * const over = new Uint8Array(BODY_LIMIT_BYTES + 1) // answered 413
 * ```
 */
export const BODY_LIMIT_BYTES: number = 64 * 1024

/**
 * A promise with its resolver, to pace a stream from a test.
 *
 * @example
 * ```ts
 * const paced: Gate = gate()
 * paced.open()
 * ```
 */
export interface Gate {
  readonly promise: Promise<void>
  open(): void
}

/**
 * Makes a {@link Gate}.
 *
 * @example
 * ```ts
 * const paced = gate()
 * setTimeout(() => paced.open(), 10)
 * await paced.promise
 * ```
 */
export function gate(): Gate {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/**
 * What the handler reports to the tests about one disconnecting stream.
 *
 * @example
 * ```ts
 * const watch: Disconnect = { cancelled: gate(), aborted: gate() }
 * ```
 */
export interface Disconnect {
  /** Opens when the response body stream was cancelled. */
  readonly cancelled: Gate
  /** Opens when the request's AbortSignal fired. */
  readonly aborted: Gate
}

/**
 * Shared between the tests and the handler, keyed by the `id` query parameter.
 *
 * @example
 * ```ts
 * const state: SuiteState = { gates: new Map(), disconnects: new Map() }
 * ```
 */
export interface SuiteState {
  readonly gates: Map<string, Gate>
  readonly disconnects: Map<string, Disconnect>
}

const encoder = new TextEncoder()
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The suite's handler. Every route reads only Fetch APIs, as an api-blocks handler would.
 *
 * @example
 * ```ts
 * const handler = suiteHandler({ gates: new Map(), disconnects: new Map() })
 * const response = await handler(new Request('http://x.test/status/418'))
 * ```
 */
export function suiteHandler(state: SuiteState): Handler {
  return async (request) => {
    const url = new URL(request.url)
    const [, route = '', ...rest] = url.pathname.split('/')
    const id = url.searchParams.get('id') ?? ''
    switch (route) {
      case 'status': {
        const status = Number(rest[0])
        if (status === 204 || status === 304) return new Response(null, { status })
        const headers: Record<string, string> = { 'content-type': 'text/plain' }
        if (status >= 300 && status < 400) headers['location'] = '/elsewhere'
        return new Response(`status ${status}`, { status, headers })
      }
      case 'headers': {
        const headers = new Headers({ 'content-type': 'text/plain' })
        headers.append('set-cookie', 'a=1; Path=/')
        headers.append('set-cookie', 'b=2; Path=/; HttpOnly')
        headers.append('x-multi', 'one')
        headers.append('x-multi', 'two')
        return new Response('headers', { headers })
      }
      case 'request-id':
        return new Response(null, {
          status: 204,
          headers: { 'x-request-id': request.headers.get('x-request-id') ?? 'missing' },
        })
      case 'text':
        return new Response('hello, head', { headers: { 'content-type': 'text/plain' } })
      case 'stream': {
        const paced = state.gates.get(id)
        const body = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(encoder.encode('alpha;'))
            await paced?.promise
            for (const part of ['beta;', 'gamma;', 'delta']) {
              await later(5)
              controller.enqueue(encoder.encode(part))
            }
            controller.close()
          },
        })
        return new Response(body, { headers: { 'content-type': 'text/plain' } })
      }
      case 'large': {
        const total = Number(rest[0])
        const chunk = new Uint8Array(64 * 1024).map((_, i) => i % 251)
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            const size = Math.min(chunk.byteLength, total - sent)
            controller.enqueue(chunk.slice(0, size))
            sent += size
            if (sent >= total) controller.close()
          },
        })
        return new Response(body, { headers: { 'content-type': 'application/octet-stream' } })
      }
      case 'endless': {
        const watch = state.disconnects.get(id)
        request.signal.addEventListener('abort', () => watch?.aborted.open(), { once: true })
        let timer: ReturnType<typeof setInterval> | undefined
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode('tick\n'))
            timer = setInterval(() => controller.enqueue(encoder.encode('tick\n')), 5)
          },
          cancel() {
            clearInterval(timer)
            watch?.cancelled.open()
          },
        })
        return new Response(body, { headers: { 'content-type': 'text/plain' } })
      }
      case 'digest': {
        const hash = createHash('sha256')
        let length = 0
        const reader = request.body?.getReader()
        for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
          hash.update(next.value)
          length += next.value.byteLength
        }
        return Response.json({ length, sha256: hash.digest('hex') })
      }
      case 'limited':
        return readLimited(request)
      case 'echo-url':
        return Response.json({ url: request.url, method: request.method })
      case 'problem':
        throw problems.notFound.error({ detail: 'There is no such widget.' })
      case 'crash':
        throw new Error('secret: the database password is hunter2')
      default:
        return new Response('no route', { status: 404 })
    }
  }
}

// The body limit as a handler enforces it: read up to the limit, then give up with 413.
async function readLimited(request: Request): Promise<Response> {
  const reader = request.body?.getReader()
  let length = 0
  while (reader) {
    const { done, value } = await reader.read()
    if (done) break
    length += value.byteLength
    if (length > BODY_LIMIT_BYTES) {
      await reader.cancel()
      return toProblemResponse(problems.payloadTooLarge.create({ max_bytes: BODY_LIMIT_BYTES }), {
        request,
      })
    }
  }
  return Response.json({ length })
}
