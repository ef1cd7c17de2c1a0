/**
 * A fetch for URLs found in webhook payloads (docs/spec.md §4.4 rule 5): a thin event names
 * the object, and the receiver fetches it, but the URL came from outside. Every connection goes
 * through the SSRF guard's dispatcher, redirects are followed by hand so that each hop's
 * scheme is checked and each hop's connection is checked by the guard, with a hop cap, one
 * deadline and a body limit.
 *
 * @module
 */
import type { HeadersInitLike } from '@api-blocks/core'
import type { Dispatcher } from 'undici'
import { request } from 'undici'
import { WebhookError } from './error.ts'
import type { SsrfGuard } from './ssrf/guard.ts'
import { createSsrfGuard } from './ssrf/guard.ts'

/**
 * Options of {@link createSafeFetch}.
 *
 * @example
 * ```ts
 * const options: SafeFetchOptions = { maxRedirects: 3, timeoutMs: 5_000, maxBodyBytes: 256 * 1024 }
 * ```
 */
export interface SafeFetchOptions {
  /** The SSRF guard (default: a new `createSsrfGuard()`, closed by `close()`). */
  guard?: SsrfGuard
  /** How many redirects are followed (default 5); one more is `TOO_MANY_REDIRECTS`. */
  maxRedirects?: number
  /** The deadline of the whole call, every hop and the body, in milliseconds (default 10,000). */
  timeoutMs?: number
  /** The largest body read, in bytes (default 1 MiB); more is `BODY_TOO_LARGE`. */
  maxBodyBytes?: number
}

/**
 * What a safe fetch takes besides the URL: only what a GET or HEAD needs.
 *
 * @example
 * ```ts
 * const init: SafeFetchInit = { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2_000) }
 * ```
 */
export interface SafeFetchInit {
  /** `GET` (default) or `HEAD`. */
  method?: 'GET' | 'HEAD'
  /** Request header fields. `Authorization` and `Cookie` are dropped when a redirect leaves the origin (as fetch does). */
  headers?: HeadersInitLike
  /** Aborts the call. */
  signal?: AbortSignal
}

/**
 * A safe fetch: resolves with the final response, its body read whole (within the limit);
 * `response.url` is the final URL. Rejects with a {@link WebhookError} (`URL_INVALID`,
 * `URL_REFUSED`, `TOO_MANY_REDIRECTS`, `BODY_TOO_LARGE`), a `TimeoutError` `DOMException` at
 * the deadline, the signal's reason when aborted, or a `TypeError` (`fetch failed`, the cause
 * attached) when the connection fails.
 *
 * @example
 * ```ts
 * const response = await safeFetch(event.data.object.url as string)
 * const order = await response.json()
 * await safeFetch.close()
 * ```
 */
export interface SafeFetch {
  (url: string | URL, init?: SafeFetchInit): Promise<Response>
  /** Closes the guard's connections if this safe fetch made the guard. */
  close(): Promise<void>
}

/** RFC 9110 §15.4: the redirects fetch follows (300 and 304 are not redirects to follow). */
const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** RFC 9110 §6.4.1: these carry no content. */
const NULL_BODY = new Set([204, 205, 304])
/** Fetch standard, HTTP-redirect fetch step 14: dropped when a redirect leaves the origin. */
const CROSS_ORIGIN_DROPPED = ['authorization', 'cookie', 'proxy-authorization']

function checkUrl(url: URL): URL {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebhookError(
      'URL_INVALID',
      `A safe fetch follows http: and https: only, not ${url.protocol}`,
    )
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookError('URL_INVALID', 'A safe fetch does not send URLs with credentials')
  }
  url.hash = ''
  return url
}

function parse(input: string | URL, base?: URL): URL {
  const text = typeof input === 'string' ? input : input.href
  if (text.length > 8192 || !URL.canParse(text, base)) {
    throw new WebhookError('URL_INVALID', 'A safe fetch needs an absolute http: or https: URL')
  }
  return checkUrl(new URL(text, base))
}

function count(value: number, name: string, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} is an integer of at least ${min}`)
  return value
}

/** The guard's refusal, from undici's error or its cause chain. */
function webhookErrorIn(error: unknown): WebhookError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; depth++) {
    if (cause instanceof WebhookError) return cause
    cause = cause.cause
  }
  return undefined
}

async function readBody(
  body: Dispatcher.ResponseData['body'],
  headers: Dispatcher.ResponseData['headers'],
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () => {
    body.destroy()
    return new WebhookError('BODY_TOO_LARGE', `The fetched body is over ${maxBytes} bytes`, {
      maxBytes,
    })
  }
  const declared = headers['content-length']
  if (typeof declared === 'string' && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) {
    throw tooLarge()
  }
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    length += chunk.byteLength
    if (length > maxBytes) throw tooLarge()
    chunks.push(chunk)
  }
  const bytes = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}

function toHeaders(fields: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  return headers
}

/**
 * Makes a safe fetch (see {@link SafeFetch}). It sends GET or HEAD only. A redirect (301, 302,
 * 303, 307, 308) is followed by hand: the `Location` is resolved against the current URL and
 * must be `http:` or `https:` without credentials, the guard's dispatcher checks the new
 * connection (a public name that redirects to 169.254.169.254 is refused at that hop),
 * `Authorization` and `Cookie` are dropped when the origin changes, and past `maxRedirects`
 * hops the call fails with `TOO_MANY_REDIRECTS`.
 *
 * @example
 * ```ts
 * const safeFetch = createSafeFetch({ maxRedirects: 3 })
 * const response = await safeFetch('https://api.example.com/v1/orders/ord_1', {
 *   headers: { authorization: 'Bearer …' },
 * })
 * console.log(response.status, response.url)
 * ```
 */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  const guard = options.guard ?? createSsrfGuard()
  const ownsGuard = options.guard === undefined
  const maxRedirects = count(options.maxRedirects ?? 5, 'maxRedirects', 0)
  const timeoutMs = count(options.timeoutMs ?? 10_000, 'timeoutMs', 1)
  const maxBodyBytes = count(options.maxBodyBytes ?? 1024 * 1024, 'maxBodyBytes', 0)

  async function safeFetch(input: string | URL, init: SafeFetchInit = {}): Promise<Response> {
    const method = init.method ?? 'GET'
    if (method !== 'GET' && method !== 'HEAD') {
      throw new TypeError('A safe fetch sends GET or HEAD only')
    }
    let url = parse(input)
    const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0])
    const deadline = new AbortController()
    const timer = setTimeout(
      () =>
        deadline.abort(
          new DOMException(`The safe fetch took longer than ${timeoutMs} ms`, 'TimeoutError'),
        ),
      timeoutMs,
    )
    const signal =
      init.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, init.signal])
    try {
      for (let hop = 0; ; hop++) {
        const response = await request(url, {
          dispatcher: guard.dispatcher,
          method,
          headers: Object.fromEntries(headers),
          signal,
        })
        const location = response.headers['location']
        if (REDIRECTS.has(response.statusCode) && typeof location === 'string') {
          // The redirect's own body is not wanted: a short one is read to keep the connection,
          // past 16 KiB the connection is dropped instead.
          await response.body.dump({ limit: 16 * 1024 })
          if (hop >= maxRedirects) {
            throw new WebhookError(
              'TOO_MANY_REDIRECTS',
              `A safe fetch follows at most ${maxRedirects} redirects`,
            )
          }
          const next = parse(location, url)
          if (next.origin !== url.origin)
            for (const name of CROSS_ORIGIN_DROPPED) headers.delete(name)
          url = next
          continue
        }
        const bytes = await readBody(response.body, response.headers, maxBodyBytes)
        const answer = new Response(
          NULL_BODY.has(response.statusCode) || method === 'HEAD' ? null : bytes,
          { status: response.statusCode, headers: toHeaders(response.headers) },
        )
        // A constructed Response has an empty `url`; the caller needs the final one to resolve
        // relative references in the body.
        Object.defineProperty(answer, 'url', { value: url.href })
        return answer
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason
      const refusal = webhookErrorIn(error)
      if (refusal !== undefined) throw refusal
      throw new TypeError('fetch failed', { cause: error })
    } finally {
      clearTimeout(timer)
    }
  }

  return Object.assign(safeFetch, {
    async close() {
      if (ownsGuard) await guard.close()
    },
  })
}
