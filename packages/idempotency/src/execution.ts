/**
 * The execution of a claimed request: the body is handed on to the handler (the very Request
 * when it can take the bytes back, the parsed JSON with it), the handler runs with its
 * {@link IdempotencyContext}, and its response is stored for replays, or the claim released so
 * that a retry runs again.
 *
 * Response bodies are read ahead of the client, up to `maxStoredBytes`: a body that ends
 * within the limit is stored before the client gets it, so a client that read a whole
 * response and retries at once finds it stored. A body the Response holds in memory is taken
 * as it is (`wholeBodyOf`) and the Response goes on untouched.
 *
 * @module
 */
import type { ReadAhead } from '@api-blocks/core'
import {
  copyContext,
  handOnParsedJson,
  readAhead,
  restoreBody,
  wholeBodyOf,
  withDeadline,
} from '@api-blocks/core'
import type { IdempotencyContext } from './context.ts'
import { bindIdempotencyContext } from './context.ts'
import { IdempotencyError } from './error.ts'
import type { IdempotencyEvent, ResolvedOptions } from './options.ts'
import type { PreparedRequest } from './prepare.ts'
import { storedFieldsOf } from './replay.ts'
import type { IdempotencyStore, StoredResponse } from './store.ts'

type ReleaseReason = Extract<IdempotencyEvent, { type: 'released' }>['reason']

const EMPTY = new Uint8Array(0)
const encoder = new TextEncoder()

/** @internal Runs `next` for a request whose key `owner` claimed, and stores what it answers. */
export async function execute(
  config: ResolvedOptions,
  request: Request,
  next: (request: Request) => Promise<Response>,
  prepared: PreparedRequest,
  owner: string,
  recoveryPoint: string | undefined,
): Promise<Response> {
  const { storeKey } = prepared
  const forwarded = handOn(request, prepared)
  const execution = new Execution(config, prepared, owner, recoveryPoint)
  bindIdempotencyContext(forwarded, execution)
  config.emit?.({ type: 'executed', storeKey, recoveryPoint })

  let response: Response
  try {
    response = await next(forwarded)
  } catch (error) {
    await release(config, storeKey, owner, 'thrown')
    throw error
  }
  // The handler stored this very response itself, in its own transaction (completeWith).
  if (execution.completed === response) return response
  if (!config.storeStatus(response.status)) {
    await release(config, storeKey, owner, 'status')
    return response
  }
  return await storeResponse(config, response, {
    complete: (stored) => complete(config, storeKey, owner, stored),
    release: (reason) => release(config, storeKey, owner, reason),
  })
}

/**
 * The request to hand on, its body the bytes read for the fingerprint: the request itself when
 * it still holds them (`wholeBodyOf`), has no body, or takes them back (`restoreBody`);
 * otherwise a new Request with the same bytes and the same per-request context. The value
 * parsed for the fingerprint goes with it (`handOnParsedJson`) when the request handed on
 * holds those very bytes, for `readJson` of `@api-blocks/http` to take instead of parsing them
 * again.
 */
function handOn(request: Request, prepared: PreparedRequest): Request {
  const { body } = prepared
  let forwarded = request
  if (wholeBodyOf(request) !== body) {
    if (body.byteLength === 0 && request.body === null) return request
    if (!restoreBody(request, body)) {
      forwarded = new Request(request, { body: body as Uint8Array<ArrayBuffer> })
      copyContext(request, forwarded)
    }
  }
  if (prepared.json !== undefined && wholeBodyOf(forwarded) === body) {
    handOnParsedJson(forwarded, body, prepared.json)
  }
  return forwarded
}

/** The {@link IdempotencyContext} of one execution. */
class Execution implements IdempotencyContext {
  readonly key: string
  readonly storeKey: string
  readonly fingerprint: string
  readonly recoveryPoint: string | undefined
  readonly #config: ResolvedOptions
  readonly #owner: string
  /** The response `completeWith` stored, which the middleware then does not store again. */
  completed: Response | undefined

  constructor(
    config: ResolvedOptions,
    prepared: PreparedRequest,
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
      recorded = await withDeadline(
        config.store.checkpoint(storeKey, this.#owner, {
          recoveryPoint: point,
          retentionMs: config.retentionMs,
          now: config.clock(),
        }),
        config.storeTimeoutMs,
      )
    } catch (error) {
      config.emit?.({ type: 'store-error', storeKey, operation: 'checkpoint', error })
      throw new IdempotencyError('STORE_UNAVAILABLE', 'The idempotency store is unavailable.', {
        cause: error,
      })
    }
    if (!recorded) {
      throw new IdempotencyError(
        'IDEMPOTENCY_LEASE_LOST',
        'The lease on this Idempotency-Key ended and another request may have taken it over.',
      )
    }
  }

  async completeWith(response: Response, store: IdempotencyStore): Promise<Response> {
    if (this.completed !== undefined) {
      throw new TypeError('completeWith: this execution already stored its response')
    }
    const config = this.#config
    // Not stored by policy: the middleware releases the claim once the handler returns.
    if (!config.storeStatus(response.status)) return response
    const { storeKey } = this
    const owner = this.#owner
    let stored = false
    const answer = await storeResponse(config, response, {
      complete: async (completion) => {
        let done: boolean
        try {
          done = await store.complete(storeKey, owner, {
            response: completion,
            retentionMs: config.retentionMs,
            now: config.clock(),
          })
        } catch (error) {
          config.emit?.({ type: 'store-error', storeKey, operation: 'complete', error })
          throw new IdempotencyError('STORE_UNAVAILABLE', 'The idempotency store is unavailable.', {
            cause: error,
          })
        }
        if (!done) {
          config.emit?.({ type: 'lost', storeKey, operation: 'complete' })
          throw new IdempotencyError(
            'IDEMPOTENCY_LEASE_LOST',
            'The lease on this Idempotency-Key ended and another request may have taken it over.',
          )
        }
        config.emit?.({
          type: 'stored',
          storeKey,
          status: completion.status,
          bytes: completion.body.byteLength,
        })
        stored = true
      },
      // Too large, or the body failed: the middleware releases the claim after the handler
      // (which returns the answer, or throws and rolls its transaction back).
      release: async () => {},
    })
    if (stored) this.completed = answer
    return answer
  }
}

/** Where {@link storeResponse} takes its decision: the middleware's store, or completeWith's. */
interface Settle {
  complete(response: StoredResponse): Promise<void>
  release(reason: ReleaseReason): Promise<void>
}

/**
 * Stores `response` when its body fits `maxStoredBytes`, and answers what goes to the client:
 * the same Response, or one sending the bytes read ahead (and, over the limit, the rest).
 */
async function storeResponse(
  config: ResolvedOptions,
  response: Response,
  settle: Settle,
): Promise<Response> {
  const status = response.status
  const headers = storedFieldsOf(response, config.omitHeaders)
  const held = heldBody(response, config.maxStoredBytes)
  if (held !== undefined) {
    // A body held in memory: stored without streaming it, and the response goes on
    // untouched; over maxStoredBytes (null), not stored.
    if (held === null) await settle.release('too-large')
    else await settle.complete({ status, headers, body: held })
    return response
  }
  if (response.body === null) {
    await settle.complete({ status, headers, body: EMPTY })
    return response
  }
  // Read ahead, up to maxStoredBytes: a body that ends within the limit is stored before the
  // client gets it, and sent as bytes (written in one go by adapters). One over the limit is
  // not stored (the claim is released) and streams on to the client from what was read.
  let ahead: ReadAhead
  try {
    ahead = await readAhead(response.body, config.maxStoredBytes)
  } catch (error) {
    await settle.release('body-error')
    throw error
  }
  const init = { status, statusText: response.statusText, headers: response.headers }
  if (!ahead.complete) {
    await settle.release('too-large')
    return new Response(ahead.stream, init)
  }
  await settle.complete({ status, headers, body: ahead.bytes })
  return new Response(ahead.bytes as Uint8Array<ArrayBuffer>, init)
}

/**
 * The body bytes when `response` holds them whole in memory (`wholeBodyOf`); `undefined`
 * otherwise, and `null` when the body is over `maxBytes` (a string is refused by its length
 * before any encoding: its UTF-8 is never shorter).
 */
function heldBody(response: Response, maxBytes: number): Uint8Array | null | undefined {
  const whole = wholeBodyOf(response)
  if (whole === undefined) return undefined
  if (whole === null) return EMPTY
  if (typeof whole === 'string') {
    if (whole.length > maxBytes) return null
    const bytes = encoder.encode(whole)
    return bytes.byteLength > maxBytes ? null : bytes
  }
  return whole.byteLength > maxBytes ? null : whole
}

/** Stores the response; never throws (a failure is reported, and the claim left to its lease). */
async function complete(
  config: ResolvedOptions,
  storeKey: string,
  owner: string,
  response: StoredResponse,
): Promise<void> {
  const { emit } = config
  let stored: boolean
  try {
    // Not behind the breaker: the handler has run, and storing its answer is what keeps a
    // retry from running it again, so it is always tried, within the deadline.
    stored = await withDeadline(
      config.store.complete(storeKey, owner, {
        response,
        retentionMs: config.retentionMs,
        now: config.clock(),
      }),
      config.storeTimeoutMs,
    )
  } catch (error) {
    emit?.({ type: 'store-error', storeKey, operation: 'complete', error })
    return
  }
  emit?.(
    stored
      ? { type: 'stored', storeKey, status: response.status, bytes: response.body.byteLength }
      : { type: 'lost', storeKey, operation: 'complete' },
  )
}

/** Releases the claim; never throws (a failed release leaves the claim to its lease). */
async function release(
  config: ResolvedOptions,
  storeKey: string,
  owner: string,
  reason: ReleaseReason,
): Promise<void> {
  const { emit } = config
  try {
    const released = await withDeadline(
      config.store.release(storeKey, owner),
      config.storeTimeoutMs,
    )
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
