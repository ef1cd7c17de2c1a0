/**
 * The one error class of @api-blocks/webhooks: every refusal the package reports to a caller
 * (an event that is not a valid envelope, a URL the SSRF guard refuses, an unknown endpoint, a
 * body over its limit) is a {@link WebhookError}, a `ProblemError` with a stable
 * {@link WebhookErrorCode}. A signature that does not verify stays a `WebhookSignatureError`
 * of @api-blocks/webhook-signature (400).
 *
 * Delivery failures are not errors: the sender reports them as an `AttemptResult` and the
 * retry policy decides what follows.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why a call was refused, in the one spelling of every api-blocks code. Stable: switch on it
 * in logs and metrics.
 *
 * @example
 * ```ts
 * const code: WebhookErrorCode = 'URL_REFUSED'
 * ```
 */
export type WebhookErrorCode =
  /** An event is not a valid envelope (400 `bad-request`; the detail names the member). */
  | 'EVENT_INVALID'
  /** A receiver URL is not an absolute `http:` or `https:` URL within the length limit, or carries credentials or a fragment (422 `validation`). */
  | 'URL_INVALID'
  /** The SSRF guard refuses a receiver URL: its host is, or resolves to, an address it does not allow (422 `validation`). */
  | 'URL_REFUSED'
  /** The host of a receiver URL does not resolve (422 `validation`). */
  | 'URL_UNRESOLVABLE'
  /** An endpoint's event-type selection is not a list of known `<object>.<action>` types within the limits (422 `validation`). */
  | 'EVENTS_INVALID'
  /** No endpoint has this id, or it belongs to someone else (404 `not-found`). */
  | 'ENDPOINT_NOT_FOUND'
  /** No delivery of this event to this endpoint (404 `not-found`). */
  | 'DELIVERY_NOT_FOUND'
  /** A received body, or a fetched one, is over its byte limit (413 `payload-too-large`). */
  | 'BODY_TOO_LARGE'
  /** A safe fetch followed more redirects than its hop cap allows (400 `bad-request`). */
  | 'TOO_MANY_REDIRECTS'
  /** An endpoint kept changing under a registry write: its compare-and-set lost every retry (409 `conflict`). */
  | 'ENDPOINT_CONFLICT'
  /** A safe fetch got no complete answer within its deadline (503 `service-unavailable`). */
  | 'FETCH_TIMEOUT'
  /** A safe fetch could not connect or lost the connection: DNS, refused, reset, TLS; the `cause` says which (503 `service-unavailable`). */
  | 'FETCH_FAILED'
  /** An event id already published with another payload: an id names one event, its every delivery the same bytes (409 `conflict`). */
  | 'EVENT_ID_REUSED'

/**
 * A refusal of @api-blocks/webhooks. It is an `ApiBlocksError` (through `ProblemError`), so
 * `toProblem()` and every adapter answer it with the problem its code names. `instanceof`
 * holds across duplicate installs of this package.
 *
 * @example
 * ```ts
 * try {
 *   await registry.create({ url: 'http://169.254.169.254/latest/meta-data' })
 * } catch (error) {
 *   if (error instanceof WebhookError) console.log(error.code) // 'URL_REFUSED'
 *   throw error
 * }
 * ```
 */
export class WebhookError extends ProblemError {
  static override readonly kind: string = 'webhooks.WebhookError'
  /** Why the call was refused (see {@link WebhookErrorCode}). */
  declare readonly code: WebhookErrorCode

  constructor(code: WebhookErrorCode, detail: string, options?: WebhookErrorOptions) {
    super(problemFor(code, detail, options?.maxBytes ?? 0), { code, cause: options?.cause })
    this.message = detail
  }
}

/**
 * Options of a {@link WebhookError}: the `cause`, and for `BODY_TOO_LARGE` the limit the
 * problem names in `max_bytes`.
 *
 * @example
 * ```ts
 * const options: WebhookErrorOptions = { maxBytes: 1_048_576 }
 * ```
 */
export interface WebhookErrorOptions extends ErrorOptions {
  /** The byte limit that was passed (`BODY_TOO_LARGE`). */
  maxBytes?: number
}

function problemFor(code: WebhookErrorCode, detail: string, maxBytes: number) {
  switch (code) {
    case 'URL_INVALID':
    case 'URL_REFUSED':
    case 'URL_UNRESOLVABLE':
      return problems.validation.create({ detail, errors: [{ pointer: '/url', detail }] })
    case 'EVENTS_INVALID':
      return problems.validation.create({ detail, errors: [{ pointer: '/events', detail }] })
    case 'ENDPOINT_NOT_FOUND':
    case 'DELIVERY_NOT_FOUND':
      return problems.notFound.create({ detail })
    case 'ENDPOINT_CONFLICT':
    case 'EVENT_ID_REUSED':
      return problems.conflict.create({ detail })
    case 'FETCH_TIMEOUT':
    case 'FETCH_FAILED':
      return problems.serviceUnavailable.create({ detail })
    case 'BODY_TOO_LARGE':
      return problems.payloadTooLarge.create({ detail, max_bytes: maxBytes })
    default:
      return problems.badRequest.create({ detail })
  }
}
