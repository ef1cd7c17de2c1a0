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
  /**
   * The SSRF guard (default: a new `createSsrfGuard()`, closed by `close()`). Give the safe
   * fetch its own guard, made without `allowedOrigins`: an allowed origin connects whatever it
   * resolves to, so the sender's guard (which allows a local receiver) would let a URL from a
   * payload, or a redirect, reach that internal origin. `allowedRanges` are as open here as
   * there.
   */
  guard?: SsrfGuard
  /** How many redirects are followed (default 5); one more is `TOO_MANY_REDIRECTS`. */
  maxRedirects?: number
  /** The deadline of the whole call, every hop and the body, in milliseconds (default 10,000). */
  timeoutMs?: number
  /** The largest body read, in bytes (default 1 MiB); more is `BODY_TOO_LARGE`. */
  maxBodyBytes?: number
  /**
   * Whether a redirect from `https:` to `http:` is followed (default `false`: it is
   * `URL_INVALID`). The caller's header fields left with the origin anyway; what the downgrade
   * exposes is the request and the answer to anyone on the path.
   */
  allowHttpsDowngrade?: boolean
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
  /**
   * Request header fields. When a redirect leaves the origin, every field but `Accept`,
   * `Accept-Language` and `User-Agent` is dropped (`Authorization`, `Cookie`, and an
   * `X-Api-Key` or any other credential fetch would not know of).
   */
  headers?: HeadersInitLike
  /** Aborts the call. */
  signal?: AbortSignal
}

/**
 * A safe fetch: resolves with the final response, its body read whole (within the limit);
 * `response.url` is the final URL. Rejects with a {@link WebhookError}: `URL_INVALID`,
 * `URL_REFUSED`, `TOO_MANY_REDIRECTS`, `BODY_TOO_LARGE`, `FETCH_TIMEOUT` at the deadline, or
 * `FETCH_FAILED` when the connection fails (DNS, refused, reset, TLS; the cause attached); or
 * with the signal's reason when the caller's signal aborts it.
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
/**
 * The caller's header fields kept when a redirect leaves the origin. The Fetch standard
 * (HTTP-redirect fetch, step 14) drops only `Authorization`; a caller's credential may be in any
 * field (`X-Api-Key`, `Cookie`, `Private-Token`), so here every other field is dropped.
 */
const KEPT_ACROSS_ORIGINS = new Set(['accept', 'accept-language', 'user-agent'])

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

/**
 * Drops a body that is not wanted: the connection is closed rather than the rest read. The
 * stream then emits an abort error, and when undici had already finished it (a small answer in
 * one packet) nothing else listens: without this listener that error ends the process.
 */
function drop(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined)
  body.destroy()
}

async function readBody(
  body: Dispatcher.ResponseData['body'],
  headers: Dispatcher.ResponseData['headers'],
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () => {
    drop(body)
    return new WebhookError('BODY_TOO_LARGE', `The fetched body is over ${maxBytes} bytes`, {
      maxBytes,
    })
  }
  // Checked before reading: a body declared too large is refused without waiting for it.
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
 * connection (a public name that redirects to 169.254.169.254 is refused at that hop), the
 * caller's header fields but `Accept`, `Accept-Language` and `User-Agent` are dropped when the
 * origin changes, `https:` to `http:` is refused unless `allowHttpsDowngrade`, and past
 * `maxRedirects` hops the call fails with `TOO_MANY_REDIRECTS`. The answer to a HEAD, and a
 * 204, 205 or 304, has a null body whatever its `Content-Length`.
 *
 * Give it its own guard (or none: it makes one), never the sender's guard with
 * `allowedOrigins`: see {@link SafeFetchOptions.guard}.
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
  const allowHttpsDowngrade = options.allowHttpsDowngrade ?? false

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
          new WebhookError('FETCH_TIMEOUT', `The safe fetch took longer than ${timeoutMs} ms`),
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
          if (url.protocol === 'https:' && next.protocol === 'http:' && !allowHttpsDowngrade) {
            throw new WebhookError(
              'URL_INVALID',
              'A safe fetch does not follow a redirect from https: to http:',
            )
          }
          if (next.origin !== url.origin) {
            for (const name of [...headers.keys()]) {
              if (!KEPT_ACROSS_ORIGINS.has(name)) headers.delete(name)
            }
          }
          url = next
          continue
        }
        // RFC 9110 §9.3.2, §6.4.1: the answer to a HEAD, a 204, 205 or 304 has no content,
        // whatever its Content-Length says (for a HEAD, the size of the GET's).
        const bodiless = method === 'HEAD' || NULL_BODY.has(response.statusCode)
        let bytes: Uint8Array<ArrayBuffer> | null = null
        // Nothing is read; a 205 that sends content anyway is cut at 16 KiB.
        if (bodiless) await response.body.dump({ limit: 16 * 1024 })
        else bytes = await readBody(response.body, response.headers, maxBodyBytes)
        const answer = new Response(bytes, {
          status: response.statusCode,
          headers: toHeaders(response.headers),
        })
        // A constructed Response has an empty `url`; the caller needs the final one to resolve
        // relative references in the body.
        Object.defineProperty(answer, 'url', { value: url.href })
        return answer
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason
      const refusal = webhookErrorIn(error)
      if (refusal !== undefined) throw refusal
      throw new WebhookError('FETCH_FAILED', 'The safe fetch could not get an answer', {
        cause: error,
      })
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
