/**
 * The receiving side (docs/spec.md §6 rule 1): a Fetch handler that verifies a delivery over
 * its raw bytes before anything parses them, checks the envelope, drops repeats by
 * `webhook-id`, acknowledges at once and runs the handler after the answer.
 *
 * @module
 */
import { BodyReadError, readRequestBody } from '@api-blocks/core'
import { errorToProblemResponse, problems, toProblemResponse } from '@api-blocks/problem-details'
import type { WebhookSecret, WebhookSignatureScheme } from '@api-blocks/webhook-signature'
import { createVerifier } from '@api-blocks/webhook-signature'
import type { DedupStore } from './dedup-store.ts'
import { WebhookError } from './error.ts'
import type { WebhookEvent } from './event.ts'
import { parseEvent } from './event.ts'
import { MemoryDedupStore } from './memory/dedup-store.ts'

/**
 * What the handler is told besides the event: the verified header fields.
 *
 * @example
 * ```ts
 * const context: WebhookContext = { id: 'evt_1', timestamp: 1764460800 }
 * ```
 */
export interface WebhookContext {
  /** The `webhook-id` (equal to `event.id`). */
  id: string
  /** The `webhook-timestamp` of this attempt, in Unix seconds. */
  timestamp: number
}

/**
 * Options of {@link createWebhookReceiver}.
 *
 * @example
 * ```ts
 * const options: WebhookReceiverOptions = {
 *   secrets: process.env.WEBHOOK_SECRET!,
 *   handler: async (event) => console.log(event.type),
 * }
 * ```
 */
export interface WebhookReceiverOptions {
  /** The endpoint's signing secrets (`whsec_…`); several during a rotation, any one may match. */
  secrets: WebhookSecret | readonly WebhookSecret[]
  /** Which content is signed (default `'standard'`). */
  scheme?: WebhookSignatureScheme
  /** How far the `webhook-timestamp` may be from the clock, in seconds (default 300). */
  toleranceSeconds?: number
  /** Milliseconds since the epoch (default `Date.now`), for the timestamp check. */
  clock?: () => number
  /** Where handled ids are remembered (default a new `MemoryDedupStore()`: one process only; use the Redis or PostgreSQL store behind several). */
  dedup?: DedupStore
  /** How long an id is remembered, in milliseconds (default 24 hours, the sender's retry window). */
  dedupTtlMs?: number
  /** The largest body accepted, in bytes (default 1 MiB); more answers 413. */
  maxBodyBytes?: number
  /** Runs once per event id, after the answer. A failure releases the id, so a redelivery runs it again. */
  handler: (event: WebhookEvent, context: WebhookContext) => void | Promise<void>
  /**
   * Runs the handler's task after the answer is returned (default `setTimeout(task, 0)`). On
   * Cloudflare Workers pass `(task) => ctx.waitUntil(task())`. The task never rejects.
   */
  schedule?: (task: () => Promise<void>) => void
  /** Told about a handler that failed (and about a failed release of its id); default: nothing. */
  onError?: (error: unknown, event: WebhookEvent) => void
}

/**
 * A webhook endpoint as a Fetch handler.
 *
 * @example
 * ```ts
 * serve((request) => receiver.handle(request), { port: 4000 })
 * ```
 */
export interface WebhookReceiver {
  /**
   * Answers a delivery: 200 (first or repeat), 400 (signature, timestamp, envelope), 405 (not
   * POST), 413 (too large), or 500 (the dedup store failed: the sender retries). Problems are
   * `application/problem+json`. Never rejects.
   */
  handle(request: Request): Promise<Response>
}

const DAY_MS = 86_400_000

const runLater = (task: () => Promise<void>): void => {
  setTimeout(task, 0)
}

/**
 * Makes a receiver. In order: the method (POST, else 405); the body read whole within
 * `maxBodyBytes` (413 `BODY_TOO_LARGE`, checked on Content-Length first); the signature over
 * those raw bytes and the timestamp within the tolerance (400, a `WebhookSignatureError`)
 * before anything parses them; the body as UTF-8 JSON and a valid envelope (400
 * `EVENT_INVALID`) whose `id` is the `webhook-id` (400: a signed envelope replayed under another
 * id is refused); then `dedup.claim(id)`: a repeat answers 200 and nothing runs; the first
 * answers 200 at once and the handler runs after the answer. If the handler fails, the id is
 * released (a redelivery or replay runs it again) and `onError` is told.
 *
 * @example
 * ```ts
 * const receiver = createWebhookReceiver({
 *   secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
 *   handler: async (event, { id }) => {
 *     if (event.type === 'order.created') console.log('new order', event.data.object, id)
 *   },
 *   onError: (error, event) => console.error('handler failed for', event.id, error),
 * })
 * const response = await receiver.handle(request) // 200 at once, or a 400/405/413 problem
 * ```
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const verifier = createVerifier({
    secrets: options.secrets,
    ...(options.scheme === undefined ? {} : { scheme: options.scheme }),
    ...(options.toleranceSeconds === undefined
      ? {}
      : { toleranceSeconds: options.toleranceSeconds }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  })
  const dedup = options.dedup ?? new MemoryDedupStore()
  const ttlMs = options.dedupTtlMs ?? DAY_MS
  const maxBytes = options.maxBodyBytes ?? 1024 * 1024
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new RangeError('dedupTtlMs is a positive integer')
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError('maxBodyBytes is a non-negative integer')
  }
  const { handler, onError } = options
  const schedule = options.schedule ?? runLater
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

  function report(error: unknown, event: WebhookEvent): void {
    try {
      onError?.(error, event)
    } catch {
      // A failing error reporter must not become an unhandled rejection.
    }
  }

  async function readBody(request: Request): Promise<Uint8Array> {
    try {
      return await readRequestBody(request, { maxBytes })
    } catch (error) {
      if (error instanceof BodyReadError && error.code === 'BODY_TOO_LARGE') {
        throw new WebhookError('BODY_TOO_LARGE', `A webhook body is at most ${maxBytes} bytes`, {
          maxBytes,
          cause: error,
        })
      }
      throw error
    }
  }

  function parse(bytes: Uint8Array): WebhookEvent {
    let value: unknown
    try {
      value = JSON.parse(decoder.decode(bytes))
    } catch (cause) {
      throw new WebhookError('EVENT_INVALID', 'The body is not JSON in UTF-8', { cause })
    }
    return parseEvent(value)
  }

  async function handle(request: Request): Promise<Response> {
    if (request.method !== 'POST') {
      await request.body?.cancel().catch(() => undefined)
      return toProblemResponse(problems.methodNotAllowed.create({ allowed_methods: ['POST'] }), {
        request,
        headers: { allow: 'POST' },
      })
    }
    const bytes = await readBody(request)
    // docs/spec.md §5 rule 14: the signature is checked over the raw bytes, before parsing.
    const verified = await verifier.verify(request.headers, bytes)
    const event = parse(bytes)
    if (event.id !== verified.id) {
      throw new WebhookError('EVENT_INVALID', '/id: the event id is not the webhook-id')
    }
    if (!(await dedup.claim(verified.id, ttlMs))) return new Response(null, { status: 200 })
    const context: WebhookContext = { id: verified.id, timestamp: verified.timestamp }
    const task = async () => {
      try {
        await handler(event, context)
      } catch (error) {
        try {
          await dedup.release(verified.id)
        } catch (releaseError) {
          report(releaseError, event)
        }
        report(error, event)
      }
    }
    try {
      schedule(task)
    } catch (error) {
      // Not scheduled, so not handled: let the sender's retry deliver it again.
      await dedup.release(verified.id)
      throw error
    }
    return new Response(null, { status: 200 })
  }

  return {
    async handle(request: Request): Promise<Response> {
      try {
        return await handle(request)
      } catch (error) {
        return errorToProblemResponse(error, { request })
      }
    },
  }
}
