/**
 * The one error class of the node adapter: what can go wrong while converting between
 * node:http and Fetch, each with a stable `code` and the problem it answers.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/problem-details'
import { problems } from '@api-blocks/problem-details'

/** The stable codes of {@link NodeAdapterError}. */
export type NodeAdapterErrorCode =
  /** The Host (or trusted X-Forwarded-Host) header is not a valid authority. */
  | 'INVALID_HOST'
  /** The request target is neither origin-form nor an absolute http(s) URL. */
  | 'INVALID_TARGET'
  /** TRACE and TRACK cannot be represented as a Fetch Request. */
  | 'UNSUPPORTED_METHOD'
  /** The handler resolved to something that is not a Response. */
  | 'NOT_A_RESPONSE'
  /** The handler returned a Response whose body was already read. */
  | 'RESPONSE_BODY_USED'
  /** A response body stream produced a chunk that is not a Uint8Array. */
  | 'INVALID_BODY_CHUNK'
  /** The request body was consumed before the handler ran (a framework body parser). */
  | 'REQUEST_BODY_CONSUMED'
  /** The client went away before the request body was complete. */
  | 'REQUEST_ABORTED'

const CLIENT_ERRORS: ReadonlySet<NodeAdapterErrorCode> = new Set([
  'INVALID_HOST',
  'INVALID_TARGET',
  'UNSUPPORTED_METHOD',
])

/**
 * A failure to convert between node:http and Fetch. The request-side codes answer 400
 * problems; the rest are server faults and answer the catalog's 500 `internal` problem,
 * which never carries this error's message.
 *
 * @example
 * ```ts
 * try { await handler(request) } catch (error) {
 *   if (error instanceof NodeAdapterError && error.code === 'REQUEST_BODY_CONSUMED') console.warn(error.message)
 * }
 * ```
 */
export class NodeAdapterError extends Error {
  /** The stable machine code. */
  readonly code: NodeAdapterErrorCode

  constructor(code: NodeAdapterErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'NodeAdapterError'
    this.code = code
  }

  /** The problem this error answers: 400 for a malformed request, 500 otherwise. */
  toProblem(): ProblemDetails {
    return CLIENT_ERRORS.has(this.code)
      ? problems.badRequest.create({ detail: this.message })
      : problems.internal.create()
  }
}
