/**
 * The Fetch middleware: Idempotency-Key semantics in front of any handler
 * `(request) => Promise<Response>`, over an {@link IdempotencyStore}.
 *
 * For a covered method with a key: validate the key, read the body (bounded), fingerprint the
 * request, claim the scoped key atomically, then answer one of
 * - the stored response, replayed (same key, same request, completed);
 * - 409, or 422 in the `ietf` profile (same key, another request);
 * - 409 with Retry-After (the first is still running; or wait for it, as configured);
 * - the handler's response, stored for replays when the storage policy says so.
 *
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 * @module
 */
import { toProblemResponse } from '@api-blocks/problem-details'
import type { IdempotencyContext } from './context.ts'
import { bindIdempotencyContext } from './context.ts'
import { IdempotencyError } from './error.ts'
import { fingerprintOf } from './fingerprint.ts'
import { concat } from './internal/encoding.ts'
import { readBodyBounded } from './internal/read-body.ts'
import { JSON_BODY, WHOLE_BODY, wholeBody } from './internal/whole-body.ts'
import { parseIdempotencyKey } from './key.ts'
import { MemoryIdempotencyStore } from './memory-store.ts'
import type { IdempotencyEvent, IdempotencyOptions, ResolvedOptions } from './options.ts'
import { resolveOptions } from './options.ts'
import { replayResponse, storedFieldsOf } from './replay.ts'
import type { IdempotencyClaimResult, StoredResponse } from './store.ts'
import { storeKeyOf } from './store-key.ts'

/**
 * A Fetch middleware: `next` runs the rest of the chain.
 *
 * @example
 * ```ts
 * const middleware: IdempotencyMiddleware = idempotency({ store, scope: 'tenant-1' })
 * const response = await middleware(request, (forwarded) => handler(forwarded))
 * ```
 */
export type IdempotencyMiddleware = (
  request: Request,
  next: (request: Request) => Promise<Response>,
) => Promise<Response>

const NO_HEADERS: readonly [] = []

interface Prepared {
  key: string
  storeKey: string
  fingerprint: string
  body: Uint8Array | null
  /** The body parsed as JSON while fingerprinting it (`value` stays undefined otherwise). */
  json: { value?: unknown }
}

/**
 * Makes the idempotency middleware. Place it after authentication (the scope needs the
 * principal) and before precondition evaluation and the handler (a replay must not be
 * re-evaluated: see docs/idempotency.md, "Conditional requests").
 *
 * Failure modes, all answered as `application/problem+json`:
 * - missing key where `required` → 400 `idempotency-key-missing`; bad key → 400
 *   `idempotency-key-invalid`; body over `maxBodyBytes` → 413; body stream broken (the client
 *   hung up) → 400. No claim is taken in any of these.
 * - the store throws on `claim` → 503 `service-unavailable`, the handler does not run (fail
 *   closed: running it unprotected could repeat a side effect).
 * - the handler throws → the claim is released and the error is rethrown for the adapter to
 *   answer as a problem; a retry executes.
 *
 * @example
 * ```ts
 * const store = new MemoryIdempotencyStore()
 * const withIdempotency = idempotency({ store, scope: (request) => request.headers.get('x-client-id') ?? 'anonymous' })
 * const handler = (request: Request) => withIdempotency(request, createOrder)
 * ```
 */
export function idempotency(options: IdempotencyOptions): IdempotencyMiddleware {
  const config = resolveOptions(options)
  const { clock, emit } = config

  const refuse = (error: IdempotencyError, request: Request): Response =>
    toProblemResponse(error.toProblem(), {
      request,
      headers: error.headers,
      ...(config.problemBase === undefined ? {} : { base: config.problemBase }),
    })

  // A request the middleware does not cover goes straight to `next`: no async frame, no
  // promise of its own (a rejection all the same when anything here throws).
  return (request, next) => {
    try {
      // Promise.resolve hands a native promise back as it is; anything else becomes one.
      if (!config.methods.has(request.method.toUpperCase())) return Promise.resolve(next(request))
      const field = request.headers.get('idempotency-key')
      if (field === null && !config.required(request)) return Promise.resolve(next(request))
      return handle(request, next, field)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async function handle(
    request: Request,
    next: (request: Request) => Promise<Response>,
    field: string | null,
  ): Promise<Response> {
    // Key, scope, body and fingerprint. Only what is really asynchronous is awaited: a value
    // already there would cost a turn of the microtask queue per request for nothing.
    let prepared: Prepared
    try {
      if (field === null) {
        // Draft §2.7: a missing key on an operation that requires one → 400.
        throw new IdempotencyError(
          'key_missing',
          'This operation requires an Idempotency-Key header.',
        )
      }
      const key = parseIdempotencyKey(field)
      const scope = config.scope(request)
      const body = await readBodyBounded(request, config.maxBodyBytes)
      const json: { value?: unknown } = {}
      const fingerprint = fingerprintRequest(config, request, body, json)
      const storeKey = storeKeyOf(typeof scope === 'string' ? scope : await scope, key)
      prepared = {
        key,
        storeKey: typeof storeKey === 'string' ? storeKey : await storeKey,
        fingerprint: typeof fingerprint === 'string' ? fingerprint : await fingerprint,
        body,
        json,
      }
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error
      emit?.({ type: 'rejected', reason: error.reason })
      return refuse(error, request)
    }
    const { storeKey } = prepared
    const owner = config.generateOwner()
    const started = clock()

    let result: IdempotencyClaimResult
    try {
      const first = claim(config, prepared, owner)
      result = isPromise(first) ? await first : first
      // Optionally wait for the first execution instead of answering 409 at once.
      const wait = config.waitForInFlight
      while (
        result.state === 'in-flight' &&
        wait !== undefined &&
        clock() + wait.pollMs <= started + wait.timeoutMs &&
        !request.signal.aborted
      ) {
        await config.sleep(wait.pollMs)
        result = await claim(config, prepared, owner)
      }
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error
      return refuse(error, request)
    }

    switch (result.state) {
      case 'completed':
        // Draft §2.6: a duplicate of a completed request gets its result.
        emit?.({ type: 'replayed', storeKey, status: result.response.status })
        return replayResponse(result.response)
      case 'mismatch':
        // Draft §2.2: a key MUST NOT be reused with another payload; §2.7 answers 422,
        // SPEC.md §4.3 rule 6 answers 409.
        emit?.({ type: 'mismatch', storeKey })
        return refuse(
          new IdempotencyError(
            'key_reused',
            'This Idempotency-Key was already used with a different request (method, route or body).',
            config.mismatchStatus === undefined ? {} : { status: config.mismatchStatus },
          ),
          request,
        )
      case 'in-flight': {
        // Draft §2.6: a concurrent duplicate MUST get a conflict error; §2.7: 409.
        emit?.({ type: 'in-flight', storeKey, waitedMs: clock() - started })
        const leaseLeft = Math.ceil((result.leaseExpiresAt - clock()) / 1000)
        const retryAfter = Math.max(1, Math.min(config.retryAfterSeconds, leaseLeft))
        return refuse(
          new IdempotencyError(
            'in_flight',
            'A request with this Idempotency-Key is still being processed.',
            { retryAfter },
          ),
          request,
        )
      }
      case 'claimed':
        // Awaited rather than returned: adopting a returned promise costs two more turns of
        // the microtask queue.
        return await execute(config, request, next, prepared, owner, result.recoveryPoint)
    }
  }
}

/**
 * Claims the scoped key. A store that answers synchronously (the memory store) is not
 * awaited. A store failure becomes `store_unavailable` (503: fail closed).
 */
function claim(
  config: ResolvedOptions,
  prepared: Prepared,
  owner: string,
): IdempotencyClaimResult | Promise<IdempotencyClaimResult> {
  const { storeKey } = prepared
  try {
    const answer = config.store.claim(storeKey, {
      fingerprint: prepared.fingerprint,
      owner,
      leaseMs: config.leaseMs,
      now: config.clock(),
    })
    return isPromise(answer)
      ? answer.then(undefined, (error: unknown) => unavailable(config, storeKey, error))
      : answer
  } catch (error) {
    return unavailable(config, storeKey, error)
  }
}

function unavailable(config: ResolvedOptions, storeKey: string, error: unknown): never {
  config.emit?.({ type: 'store-error', storeKey, operation: 'claim', error })
  throw new IdempotencyError(
    'store_unavailable',
    'The idempotency store is unavailable; the request was not processed. Retry later.',
    { cause: error },
  )
}

function fingerprintRequest(
  config: ResolvedOptions,
  request: Request,
  body: Uint8Array | null,
  json: { value?: unknown },
): string | Promise<string> {
  return fingerprintOf(
    {
      method: request.method,
      route: config.route(request),
      body: body ?? new Uint8Array(0),
      contentType: request.headers.get('content-type'),
      headers:
        config.fingerprintHeaders.length === 0
          ? NO_HEADERS
          : config.fingerprintHeaders.map((name) => [name, request.headers.get(name)] as const),
    },
    { encoding: config.fingerprintEncoding },
    json,
  )
}

/** Releases the claim; never throws (a failed release leaves the claim to its lease). */
async function release(
  config: ResolvedOptions,
  storeKey: string,
  owner: string,
  reason: Extract<IdempotencyEvent, { type: 'released' }>['reason'],
): Promise<void> {
  const { emit } = config
  try {
    const released = await config.store.release(storeKey, owner)
    emit?.(
      released
        ? { type: 'released', storeKey, reason }
        : { type: 'lost', storeKey, operation: 'release' },
    )
  } catch (error) {
    // The claim stays until its lease ends; then a retry executes.
    emit?.({ type: 'store-error', storeKey, operation: 'release', error })
  }
}

/** Stores the response; settles without throwing, a promise only when the store answered one. */
function complete(
  config: ResolvedOptions,
  storeKey: string,
  owner: string,
  response: StoredResponse,
): Promise<void> | undefined {
  const { emit } = config
  const failed = (error: unknown) =>
    emit?.({ type: 'store-error', storeKey, operation: 'complete', error })
  let answer: boolean | Promise<boolean>
  try {
    answer = config.store.complete(storeKey, owner, {
      response,
      retentionMs: config.retentionMs,
      now: config.clock(),
    })
  } catch (error) {
    failed(error)
    return undefined
  }
  if (emit === undefined) return isPromise(answer) ? answer.then(noop, noop) : undefined
  const done = (stored: boolean) =>
    emit(
      stored
        ? { type: 'stored', storeKey, status: response.status, bytes: response.body.byteLength }
        : { type: 'lost', storeKey, operation: 'complete' },
    )
  if (isPromise(answer)) return answer.then(done, failed)
  done(answer)
  return undefined
}

function noop(): void {}

/** The {@link IdempotencyContext} of one execution. */
class Execution implements IdempotencyContext {
  readonly key: string
  readonly storeKey: string
  readonly fingerprint: string
  readonly recoveryPoint: string | undefined
  readonly #config: ResolvedOptions
  readonly #owner: string

  constructor(
    config: ResolvedOptions,
    prepared: Prepared,
    owner: string,
    recoveryPoint: string | undefined,
  ) {
    this.key = prepared.key
    this.storeKey = prepared.storeKey
    this.fingerprint = prepared.fingerprint
    this.recoveryPoint = recoveryPoint
    this.#config = config
    this.#owner = owner
  }

  async checkpoint(point: string): Promise<void> {
    const config = this.#config
    const { storeKey } = this
    let recorded: boolean
    try {
      recorded = await config.store.checkpoint(storeKey, this.#owner, {
        recoveryPoint: point,
        retentionMs: config.retentionMs,
        now: config.clock(),
      })
    } catch (error) {
      config.emit?.({ type: 'store-error', storeKey, operation: 'checkpoint', error })
      throw new IdempotencyError('store_unavailable', 'The idempotency store is unavailable.', {
        cause: error,
      })
    }
    if (!recorded) {
      throw new IdempotencyError(
        'lease_lost',
        'The lease on this Idempotency-Key ended and another request may have taken it over.',
      )
    }
  }
}

async function execute(
  config: ResolvedOptions,
  request: Request,
  next: (request: Request) => Promise<Response>,
  prepared: Prepared,
  owner: string,
  recoveryPoint: string | undefined,
): Promise<Response> {
  const { storeKey } = prepared
  const forwarded = prepared.body === null ? request : withBody(request, prepared.body)
  // The handler's readJson takes the value parsed for the fingerprint (see JSON_BODY) when
  // the request it gets holds these same bytes.
  const slots = forwarded as { [WHOLE_BODY]?: unknown; [JSON_BODY]?: unknown }
  if (
    prepared.json.value !== undefined &&
    slots[WHOLE_BODY] === prepared.body &&
    Object.isExtensible(forwarded)
  ) {
    slots[JSON_BODY] = { bytes: prepared.body, value: prepared.json.value }
  }
  bindIdempotencyContext(forwarded, new Execution(config, prepared, owner, recoveryPoint))
  config.emit?.({ type: 'executed', storeKey, recoveryPoint })

  let response: Response
  try {
    response = await next(forwarded)
  } catch (error) {
    await release(config, storeKey, owner, 'thrown')
    throw error
  }
  if (!config.storeStatus(response.status)) {
    await release(config, storeKey, owner, 'status')
    return response
  }
  const status = response.status
  const headers = storedFieldsOf(response, config.omitHeaders)
  const whole = wholeBody(
    response,
    config.maxStoredBytes,
    config.store instanceof MemoryIdempotencyStore,
  )
  if (whole !== undefined) {
    // A body held in memory (see internal/whole-body.ts): stored without streaming it, and
    // the response goes on untouched; over maxStoredBytes (null), not stored.
    if (whole === null) await release(config, storeKey, owner, 'too-large')
    else {
      const completing = complete(config, storeKey, owner, { status, headers, body: whole })
      if (completing !== undefined) await completing
    }
    return response
  }
  if (response.body === null) {
    const completing = complete(config, storeKey, owner, {
      status,
      headers,
      body: new Uint8Array(0),
    })
    if (completing !== undefined) await completing
    return response
  }
  // Read ahead, up to maxStoredBytes: a body that ends within the limit is stored before the
  // client gets it, and sent as bytes (written in one go by adapters). One over the limit is
  // not stored (the claim is released) and streams on to the client from what was read.
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  for (;;) {
    let result: ReadableStreamReadResult<Uint8Array>
    try {
      result = await reader.read()
      if (!result.done && !(result.value instanceof Uint8Array)) {
        throw new TypeError('A response body chunk is not a Uint8Array')
      }
    } catch (error) {
      await release(config, storeKey, owner, 'body-error')
      reader.cancel(error).catch(() => undefined)
      throw error
    }
    if (result.done) break
    chunks.push(result.value)
    length += result.value.byteLength
    if (length > config.maxStoredBytes) {
      await release(config, storeKey, owner, 'too-large')
      return new Response(resume(chunks, reader), {
        status,
        statusText: response.statusText,
        headers: response.headers,
      })
    }
  }
  const body = concat(chunks, length)
  const completing = complete(config, storeKey, owner, { status, headers, body })
  if (completing !== undefined) await completing
  return new Response(body as Uint8Array<ArrayBuffer>, {
    status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

/** The chunks already read, then the rest of the source. */
function resume(
  read: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = read.shift()
      if (next !== undefined) return controller.enqueue(next)
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

const RESTORE_BODY = Symbol.for('api-blocks.restore-body')

/**
 * The request to hand on, its body the bytes the middleware read for the fingerprint: the
 * request itself when it still holds them (the whole-body slot) or takes them back (the
 * restore-body slot of `@api-blocks/node`'s Request); otherwise a new Request with the same
 * bytes (@api-blocks/http's compose() carries the per-request context over to it).
 */
function withBody(request: Request, body: Uint8Array): Request {
  const slots = request as { [WHOLE_BODY]?: unknown; [RESTORE_BODY]?: unknown }
  if (slots[WHOLE_BODY] === body) return request
  const restore = slots[RESTORE_BODY]
  if (typeof restore === 'function' && restore.call(request, body) === true) return request
  return new Request(request, { body: body as Uint8Array<ArrayBuffer> })
}
