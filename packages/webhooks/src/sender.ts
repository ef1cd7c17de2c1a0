/**
 * The sender: one signed POST of one delivery to one receiver (docs/spec.md §3.1 and §5 rule
 * 14), through the SSRF guard's dispatcher. It reports what happened as an
 * {@link AttemptResult} and never throws: the retry policy decides what follows.
 *
 * @module
 */
import { parseHttpDate } from '@api-blocks/conditional'
import type {
  WebhookHeaders,
  WebhookSignatureScheme,
  WebhookSigner,
} from '@api-blocks/webhook-signature'
import { createSigner } from '@api-blocks/webhook-signature'
import type { Dispatcher } from 'undici'
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
/** Receiver URLs kept parsed, the most recent this many. */
const MAX_CACHED_TARGETS = 256
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

/** Where a receiver URL's POSTs go: undici's `origin` and `path`. */
interface Target {
  readonly origin: string
  readonly path: string
}

/** Decodes response bodies; without `{ stream: true }` it keeps no state between calls. */
const utf8 = new TextDecoder()

/** How a sender's attempts end; shared by all its attempts. */
interface Settings {
  readonly clock: () => number
  readonly timeoutMs: number
  readonly limit: number
  readonly deadlines: Deadlines
}

/**
 * The sender's attempts in flight, in deadline order, under one timer. Every attempt of a
 * sender has the same `timeoutMs`, so the order they start in is the order their deadlines
 * fall in: appending keeps the list sorted, a settled attempt unlinks itself, and the one timer
 * is set for the head. This replaces an `AbortController` and a `setTimeout` per attempt, and
 * the abort listener undici adds to the signal and removes again (about 4 µs of the sender's
 * 39 µs over a bare POST in a profile). With the body read in the handler instead of through
 * undici's `request()` (its stream, async iterator and promise layers), and receiver URLs kept
 * parsed, the sender alone went from 1.9× a bare signed undici POST's CPU time per delivery
 * (83 against 44 µs) to about 1.0× (0.77–1.12× in seven runs), driven as the bare rows of
 * `npm run bench -- webhooks` are (16 in flight); that suite's memory-queue rows went from
 * 0.33–0.41× to 0.42–0.70× the bare POSTs' deliveries per second (docs/benchmarks.md, issue
 * 15, "The sender's share"). Deadlines
 * are read on `performance.now()`, not the injected clock: they are real time, as timers are.
 */
class Deadlines {
  #head: Attempt | undefined
  #tail: Attempt | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  /** When the timer fires, `performance.now()` milliseconds (when it is set). */
  #firesAt = 0

  add(attempt: Attempt): void {
    attempt.previous = this.#tail
    if (this.#tail === undefined) this.#head = attempt
    else this.#tail.next = attempt
    this.#tail = attempt
    if (this.#timer === undefined) this.#arm(attempt.deadline)
  }

  remove(attempt: Attempt): void {
    const { previous, next } = attempt
    if (previous === undefined) this.#head = next
    else previous.next = next
    if (next === undefined) this.#tail = previous
    else next.previous = previous
    attempt.previous = attempt.next = undefined
    if (this.#head === undefined && this.#timer !== undefined) {
      // Nothing in flight: no timer left to keep the process alive.
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  #arm(deadline: number): void {
    this.#firesAt = deadline
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, deadline - performance.now()))
  }

  /** Expires every attempt whose deadline has passed, then sets the timer for the next one. */
  #fire(): void {
    this.#timer = undefined
    const now = performance.now()
    // A timer may fire a little before its time (it rounds to milliseconds): a head due within
    // the millisecond is expired now rather than by a timer of 0 ms.
    while (this.#head !== undefined && this.#head.deadline <= Math.max(now, this.#firesAt)) {
      this.#head.expire()
    }
    if (this.#head !== undefined && this.#timer === undefined) this.#arm(this.#head.deadline)
  }
}

/**
 * One attempt in flight: undici's handler of the POST (`Dispatcher.dispatch`), which keeps at
 * most `limit` bytes of the body, and a node of the sender's {@link Deadlines}. It settles once,
 * with the response, the error undici reports, or the deadline, whichever comes first; what
 * undici reports after that (the error of the abort that cut the body, or of the deadline) is
 * ignored.
 */
class Attempt implements Dispatcher.DispatchHandler {
  previous: Attempt | undefined
  next: Attempt | undefined
  /** `performance.now()` milliseconds. */
  readonly deadline: number
  readonly #settings: Settings
  readonly #started: number
  readonly #resolve: (result: AttemptResult) => void
  #controller: Dispatcher.DispatchController | null = null
  #settled = false
  #status = 0
  #retryAfter: string | string[] | undefined
  #chunks: Buffer[] = []
  #length = 0

  constructor(settings: Settings, started: number, resolve: (result: AttemptResult) => void) {
    this.#settings = settings
    this.#started = started
    this.#resolve = resolve
    this.deadline = performance.now() + settings.timeoutMs
    settings.deadlines.add(this)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Started after the deadline (it waited for a connection): nothing is written.
    if (this.#settled) controller.abort(new Error('The attempt is over'))
    else this.#controller = controller
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (status < 200) return // RFC 9110 §15.2: an interim answer; the final one follows.
    this.#status = status
    this.#retryAfter = headers['retry-after']
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    const room = this.#settings.limit - this.#length
    if (chunk.byteLength > room) {
      // The rest is not read: the abort makes undici drop the connection, so a receiver
      // answering a gigabyte costs one kilobyte.
      if (room > 0) this.#chunks.push(chunk.subarray(0, room))
      this.#length += room
      this.#respond()
      controller.abort(new Error(`The response body was cut at ${this.#settings.limit} bytes`))
      return
    }
    this.#chunks.push(chunk)
    this.#length += chunk.byteLength
  }

  onResponseEnd(): void {
    this.#respond()
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.#settled) return
    const refusal = isTimeout(error) ? undefined : addressRefusalIn(error)
    if (isTimeout(error)) this.#fail('timeout', this.#timeoutMessage())
    else if (refusal !== undefined) {
      // Neither the address nor the name a lookup answered: the attempt log may be shown to
      // the endpoint's owner, and a name of theirs can point anywhere inside the network.
      const check = refusal.check === undefined ? '' : ` (${refusal.check} check)`
      this.#fail('address-refused', `${describe(refusal.error)}${check}`)
    } else this.#fail('connection', describe(error))
  }

  /** The deadline passed: a timeout, and the request aborted (its connection dropped). */
  expire(): void {
    const controller = this.#controller
    this.#fail('timeout', this.#timeoutMessage())
    controller?.abort(new Error(this.#timeoutMessage()))
  }

  #timeoutMessage(): string {
    return `No complete answer within ${this.#settings.timeoutMs} ms`
  }

  #settle(result: AttemptResult): void {
    this.#settled = true
    this.#settings.deadlines.remove(this)
    this.#controller = null
    this.#resolve(result)
  }

  #respond(): void {
    if (this.#settled) return
    const chunks = this.#chunks
    // Not fatal: the cut may fall inside a character, and receivers answer any bytes.
    const body =
      this.#length === 0
        ? ''
        : utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.#length))
    this.#chunks = []
    const ended = this.#settings.clock()
    this.#settle({
      kind: 'response',
      status: this.#status,
      retryAfterMs: retryAfterMs(this.#retryAfter, ended),
      body,
      latencyMs: Math.max(0, ended - this.#started),
    })
  }

  #fail(failure: AttemptFailure, message: string): void {
    if (this.#settled) return
    this.#chunks = []
    this.#settle(failed(failure, message, this.#started, this.#settings.clock()))
  }
}

function failed(
  failure: AttemptFailure,
  message: string,
  started: number,
  ended: number,
): AttemptResult {
  return {
    kind: 'failure',
    failure,
    message: message.slice(0, MAX_MESSAGE_LENGTH),
    latencyMs: Math.max(0, ended - started),
  }
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
  const settings: Settings = { clock, timeoutMs, limit, deadlines: new Deadlines() }
  const signers = new Map<string, WebhookSigner>()
  const targets = new Map<string, Target>()

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

  /**
   * The origin and path of a receiver URL checked by {@link parseReceiverUrl} (a
   * `URL_INVALID` error otherwise), the most recent MAX_CACHED_TARGETS kept: a worker sends to
   * the same few URLs again and again. Only the syntax is cached; the addresses are checked by
   * the guard's dispatcher at every connection.
   */
  function targetOf(text: string): Target {
    let target = targets.get(text)
    if (target === undefined) {
      const url = parseReceiverUrl(text)
      target = { origin: url.origin, path: `${url.pathname}${url.search}` }
      if (targets.size >= MAX_CACHED_TARGETS) targets.delete(targets.keys().next().value!)
    } else targets.delete(text)
    targets.set(text, target)
    return target
  }

  async function send(delivery: WebhookDelivery): Promise<AttemptResult> {
    const started = clock()
    let target: Target
    try {
      target = targetOf(delivery.url)
    } catch (error) {
      return failed('address-refused', describe(error), started, clock())
    }
    let signed: WebhookHeaders
    try {
      signed = await signerFor(delivery.secrets).sign({
        id: delivery.eventId,
        timestamp: Math.floor(started / 1000),
        body: delivery.payload,
      })
    } catch (error) {
      // A bad `webhook-id` or secret fails the same way on every attempt: not retried.
      const message = `Not sent, it could not be signed: ${describe(error)}`
      return failed('invalid-delivery', message, started, clock())
    }
    return new Promise<AttemptResult>((resolve) => {
      const attempt = new Attempt(settings, started, resolve)
      // undici reports what goes wrong to the handler, a synchronous refusal of the options
      // included (onResponseError); the catch is for a dispatcher that would throw instead.
      try {
        guard.dispatcher.dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: 'POST',
            // A flat list: undici reads it without Object.keys.
            headers: [
              'content-type',
              'application/json',
              'user-agent',
              userAgent,
              'webhook-id',
              signed['webhook-id'],
              'webhook-timestamp',
              signed['webhook-timestamp'],
              'webhook-signature',
              signed['webhook-signature'],
            ],
            body: delivery.payload,
          },
          attempt,
        )
      } catch (error) {
        attempt.onResponseError(null, error as Error)
      }
    })
  }

  return {
    send,
    timeoutMs,
    async close() {
      if (ownsGuard) await guard.close()
    },
  }
}
