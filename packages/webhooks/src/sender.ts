/**
 * The sender: one signed POST of one delivery to one receiver (docs/spec.md §3.1 and §5 rule
 * 14), through the SSRF guard's dispatcher. It reports what happened as an
 * {@link AttemptResult} and never throws: the retry policy decides what follows.
 *
 * @module
 */
import { parseHttpDate } from '@api-blocks/conditional'
import type { WebhookSignatureScheme, WebhookSigner } from '@api-blocks/webhook-signature'
import { createSigner } from '@api-blocks/webhook-signature'
import type { Dispatcher } from 'undici'
import { request } from 'undici'
import type { AttemptFailure, AttemptResult } from './attempt.ts'
import type { SsrfGuard } from './ssrf/guard.ts'
import { addressRefusalIn, createSsrfGuard, parseReceiverUrl } from './ssrf/guard.ts'

/**
 * Options of {@link createWebhookSender}.
 *
 * @example
 * ```ts
 * const options: WebhookSenderOptions = { timeoutMs: 5_000, guard: createSsrfGuard() }
 * ```
 */
export interface WebhookSenderOptions {
  /** The SSRF guard whose dispatcher every POST goes through (default: a new `createSsrfGuard()`, closed with the sender). */
  guard?: SsrfGuard
  /** The deadline of one attempt, connect, headers and body together, in milliseconds (default 10,000). */
  timeoutMs?: number
  /** The `User-Agent`: a product token and a URL that says who sends (default `api-blocks-webhooks/1 (+https://github.com/api-blocks/api-blocks)`). */
  userAgent?: string
  /** Which content is signed (default `'standard'`: `id.timestamp.body`). */
  scheme?: WebhookSignatureScheme
  /** How much of a response body is kept for the attempt log, in bytes (default 1,024); the rest is not read. */
  responseBodyBytes?: number
  /** Milliseconds since the epoch (default `Date.now`): the `webhook-timestamp`, latencies and `Retry-After` dates. */
  clock?: () => number
}

/**
 * One attempt to send.
 *
 * @example
 * ```ts
 * const delivery: WebhookDelivery = {
 *   url: 'https://hooks.example.com/orders',
 *   eventId: 'evt_1',
 *   payload: '{"id":"evt_1"}',
 *   secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
 * }
 * ```
 */
export interface WebhookDelivery {
  /** The receiver's URL (checked at registration; checked again at connect time). */
  url: string
  /** The `webhook-id`: the event's id, the same on every attempt. */
  eventId: string
  /** The exact body: the serialised event. */
  payload: string
  /** The signing secrets (`whsec_…`), one `v1` signature each (several during a rotation). */
  secrets: readonly string[]
}

/**
 * Sends deliveries.
 *
 * @example
 * ```ts
 * const result = await sender.send({ url, eventId: event.id, payload: JSON.stringify(event), secrets })
 * if (result.kind === 'response') console.log(result.status, result.latencyMs)
 * ```
 */
export interface WebhookSender {
  /** One attempt; always resolves, with the response or the reason there was none. */
  send(delivery: WebhookDelivery): Promise<AttemptResult>
  /** The deadline of one attempt in milliseconds (`timeoutMs`): a worker's lease must outlast it. */
  readonly timeoutMs: number
  /** Closes the guard's connections if the sender made the guard. */
  close(): Promise<void>
}

const DEFAULT_USER_AGENT = 'api-blocks-webhooks/1 (+https://github.com/api-blocks/api-blocks)'
/** Signers keep their HMAC keys made; one per set of secrets, the most recent this many. */
const MAX_CACHED_SIGNERS = 256
/** The longest failure message kept for the attempt log. */
const MAX_MESSAGE_LENGTH = 200
/** RFC 9110 §10.2.3: delay-seconds is `1*DIGIT`, any number of digits. */
const DELAY_SECONDS = /^[0-9]+$/
/**
 * The largest delay-seconds kept (about 31 years): a longer one is this, not ignored (the
 * receiver asked for a long wait); the retry policy caps it anyway.
 */
const MAX_DELAY_SECONDS = 1e9
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ETIMEOUT',
])

/**
 * `Retry-After` in milliseconds from `now` (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date
 * (a past date is 0). `null` when absent, repeated or not one of the two forms. Delay-seconds
 * of any length is read, capped at 10^9 seconds.
 *
 * @example
 * ```ts
 * retryAfterMs('120', Date.now()) // 120000
 * ```
 */
export function retryAfterMs(value: string | string[] | undefined, now: number): number | null {
  if (typeof value !== 'string') return null
  const text = value.trim()
  if (DELAY_SECONDS.test(text)) return Math.min(Number(text), MAX_DELAY_SECONDS) * 1000
  const date = parseHttpDate(text, { now })
  return date === undefined ? null : Math.max(0, date - now)
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`${name} is a positive integer`)
  return value
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** A short description for the attempt log: the code and the first line of the message. */
function describe(error: unknown): string {
  const inner = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error
  const message = inner instanceof Error ? inner.message.split('\n')[0] : String(inner)
  const code = codeOf(inner) ?? codeOf(error)
  const text = code !== undefined && !message?.includes(code) ? `${code}: ${message}` : `${message}`
  return text.slice(0, MAX_MESSAGE_LENGTH)
}

function isTimeout(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; depth++) {
    const code = codeOf(cause)
    if (code !== undefined && TIMEOUT_CODES.has(code)) return true
    if (cause instanceof AggregateError && cause.errors.some(isTimeout)) return true
    cause = cause.cause
  }
  return false
}

/**
 * Reads at most `limit` bytes of a response body. When there is more, the body is destroyed,
 * which makes undici drop the connection instead of reading the rest: a receiver answering a
 * gigabyte costs one kilobyte.
 */
async function readPrefix(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const room = limit - length
    if (chunk.byteLength > room) {
      chunks.push(chunk.subarray(0, room))
      length = limit
      body.destroy()
      break
    }
    chunks.push(chunk)
    length += chunk.byteLength
  }
  const bytes = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  // Not fatal: the cut may fall inside a character, and receivers answer any bytes.
  return new TextDecoder().decode(bytes)
}

/**
 * Makes the sender. Each attempt POSTs `payload` as `application/json` with `User-Agent` and
 * the Standard Webhooks fields `webhook-id`, `webhook-timestamp` (the clock at the attempt)
 * and `webhook-signature` (one `v1` signature per secret), through the guard's dispatcher.
 * Redirects are never followed: a 3xx is reported as the response it is. The deadline covers
 * connecting, the headers and the body; only `responseBodyBytes` of the body are read.
 * `Retry-After` is read as delay-seconds or an HTTP-date.
 *
 * @example
 * ```ts
 * const sender = createWebhookSender({ guard: createSsrfGuard({ allowedOrigins: ['http://127.0.0.1:4000'] }) })
 * const result = await sender.send({
 *   url: 'http://127.0.0.1:4000/hooks',
 *   eventId: 'evt_1',
 *   payload: '{"id":"evt_1","type":"order.created","created":1,"version":"1","data":{"object":{}}}',
 *   secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
 * })
 * // { kind: 'response', status: 204, retryAfterMs: null, body: '', latencyMs: 3 }
 * // or { kind: 'failure', failure: 'timeout' | 'connection' | 'address-refused' | 'invalid-delivery', … }
 * await sender.close()
 * ```
 */
export function createWebhookSender(options: WebhookSenderOptions = {}): WebhookSender {
  const guard = options.guard ?? createSsrfGuard()
  const ownsGuard = options.guard === undefined
  const timeoutMs = positive(options.timeoutMs ?? 10_000, 'timeoutMs')
  const limit = options.responseBodyBytes ?? 1024
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new RangeError('responseBodyBytes is a non-negative integer')
  }
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT
  const scheme = options.scheme ?? 'standard'
  const clock = options.clock ?? Date.now
  const signers = new Map<string, WebhookSigner>()

  function signerFor(secrets: readonly string[]): WebhookSigner {
    const key = secrets.join(' ')
    let signer = signers.get(key)
    if (signer === undefined) {
      signer = createSigner({ secrets, scheme })
      if (signers.size >= MAX_CACHED_SIGNERS) signers.delete(signers.keys().next().value!)
    } else signers.delete(key)
    signers.set(key, signer)
    return signer
  }

  async function send(delivery: WebhookDelivery): Promise<AttemptResult> {
    const started = clock()
    const failure = (failure: AttemptFailure, message: string): AttemptResult => ({
      kind: 'failure',
      failure,
      message: message.slice(0, MAX_MESSAGE_LENGTH),
      latencyMs: Math.max(0, clock() - started),
    })
    let url: URL
    try {
      url = parseReceiverUrl(delivery.url)
    } catch (error) {
      return failure('address-refused', describe(error))
    }
    let signed: Record<string, string>
    try {
      signed = await signerFor(delivery.secrets).sign({
        id: delivery.eventId,
        timestamp: Math.floor(started / 1000),
        body: delivery.payload,
      })
    } catch (error) {
      // A bad `webhook-id` or secret fails the same way on every attempt: not retried.
      return failure('invalid-delivery', `Not sent, it could not be signed: ${describe(error)}`)
    }
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(), timeoutMs)
    try {
      const response = await request(url, {
        dispatcher: guard.dispatcher,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': userAgent,
          ...signed,
        },
        body: delivery.payload,
        signal: deadline.signal,
      })
      const body = await readPrefix(response.body, limit)
      const ended = clock()
      return {
        kind: 'response',
        status: response.statusCode,
        retryAfterMs: retryAfterMs(response.headers['retry-after'], ended),
        body,
        latencyMs: Math.max(0, ended - started),
      }
    } catch (error) {
      if (deadline.signal.aborted || isTimeout(error)) {
        return failure('timeout', `No complete answer within ${timeoutMs} ms`)
      }
      const refusal = addressRefusalIn(error)
      if (refusal !== undefined) {
        // Neither the address nor the name a lookup answered: the attempt log may be shown to
        // the endpoint's owner, and a name of theirs can point anywhere inside the network.
        const check = refusal.check === undefined ? '' : ` (${refusal.check} check)`
        return failure('address-refused', `${describe(refusal.error)}${check}`)
      }
      return failure('connection', describe(error))
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    send,
    timeoutMs,
    async close() {
      if (ownsGuard) await guard.close()
    },
  }
}
