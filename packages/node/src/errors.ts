/**
 * The one error class of the node adapter: what can go wrong while converting between
 * node:http and Fetch, each with a stable `code`, the status it answers and its problem.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/core'
import { ApiBlocksError } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'

/**
 * The stable codes of {@link NodeAdapterError}.
 *
 * @example
 * ```ts
 * const code: NodeAdapterErrorCode = 'REQUEST_BODY_CONSUMED'
 * ```
 */
export type NodeAdapterErrorCode =
  /** 400: the Host (or trusted X-Forwarded-Host) header is not a valid authority. */
  | 'INVALID_HOST'
  /** 400: the request target is neither origin-form nor an absolute http(s) URL. */
  | 'INVALID_TARGET'
  /** 400: the client went away before the request body was complete. */
  | 'REQUEST_ABORTED'
  /** 500: the handler resolved to something that is not a Response. */
  | 'NOT_A_RESPONSE'
  /** 500: the handler returned a Response whose body was already read. */
  | 'RESPONSE_BODY_USED'
  /** 500: a response body stream produced a chunk that is not a Uint8Array. */
  | 'INVALID_BODY_CHUNK'
  /** 500: the request body was consumed before the handler ran (a framework body parser). */
  | 'REQUEST_BODY_CONSUMED'

const STATUS: Readonly<Record<NodeAdapterErrorCode, number>> = {
  INVALID_HOST: 400,
  INVALID_TARGET: 400,
  REQUEST_ABORTED: 400,
  NOT_A_RESPONSE: 500,
  RESPONSE_BODY_USED: 500,
  INVALID_BODY_CHUNK: 500,
  REQUEST_BODY_CONSUMED: 500,
}

/**
 * A failure to convert between node:http and Fetch. The request-side codes (`INVALID_HOST`,
 * `INVALID_TARGET`, `REQUEST_ABORTED`) answer 400 `bad-request` problems with the message
 * as `detail`; the others are server faults and answer the catalog's 500 `internal` problem,
 * which never carries the message. A body stream that fails with one of these fails every
 * api-blocks body reader with it, so its status stands.
 *
 * @example
 * ```ts
 * try { await request.text() } catch (error) {
 *   if (error instanceof NodeAdapterError && error.code === 'REQUEST_BODY_CONSUMED') console.warn(error.message)
 * }
 * ```
 */
export class NodeAdapterError extends ApiBlocksError<NodeAdapterErrorCode> {
  static override readonly kind: string = 'node.NodeAdapterError'

  constructor(code: NodeAdapterErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, status: STATUS[code] })
  }

  /** The problem this error answers: 400 `bad-request` for the request-side codes, else 500. */
  override toProblem(): ProblemDetails {
    return this.status < 500
      ? problems.badRequest.create({ detail: this.message })
      : problems.internal.create()
  }
}
