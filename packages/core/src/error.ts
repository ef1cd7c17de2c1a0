/**
 * The one error base of api-blocks, and the problem shape every error answers with.
 *
 * Every error a block throws is an {@link ApiBlocksError}: it carries a stable `code` in
 * UPPER_SNAKE_CASE (the one spelling across every package, as in `BODY_TOO_LARGE`,
 * `IDEMPOTENCY_KEY_REUSED`), the HTTP `status` it answers, and a `toProblem()` that describes
 * it as an RFC 9457 problem. Log and count by `code`; clients switch on the problem's `type`.
 *
 * `instanceof` survives duplicate installs (two copies of a package in node_modules), as in
 * undici: every class in the hierarchy names a `kind`, each instance records the kinds of its
 * classes under a `Symbol.for` key, and `instanceof` checks that record when the prototype
 * chain says no.
 *
 * @module
 */

/**
 * A problem details object as it travels on the wire (RFC 9457 §3). `type` is an absolute URI,
 * or a slug that `@api-blocks/problem-details` resolves against a base URI when it serialises.
 *
 * @example
 * ```ts
 * const problem: ProblemDetails = { type: 'about:blank', title: 'Not Found', status: 404 }
 * ```
 */
export interface ProblemDetails {
  type: string
  title: string
  status: number
  detail?: string
  instance?: string
  [extension: string]: unknown
}

/**
 * Anything that can describe itself as a problem. Every api-blocks error implements it, and the
 * adapters answer any thrown value that does with its problem.
 *
 * @example
 * ```ts
 * const source: ProblemSource = { toProblem: () => ({ type: 'about:blank', title: 'Gone', status: 410 }) }
 * ```
 */
export interface ProblemSource {
  toProblem(): ProblemDetails
}

/**
 * Whether `value` implements {@link ProblemSource}. It checks the shape, not a class, so it
 * holds across duplicate installs and for errors of other libraries that follow the protocol.
 *
 * @example
 * ```ts
 * if (isProblemSource(error)) console.log(error.toProblem().status)
 * ```
 */
export function isProblemSource(value: unknown): value is ProblemSource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toProblem?: unknown }).toProblem === 'function'
  )
}

const KINDS: unique symbol = Symbol.for('api-blocks.error-kinds') as never

// RFC 9110 §15 reason phrases, for the `title` of an `about:blank` problem (RFC 9457 §4.2.1).
const PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

/** Options of {@link ApiBlocksError}: the standard `cause`, and the status it answers. */
export interface ApiBlocksErrorOptions extends ErrorOptions {
  /** The HTTP status the error answers (default 500). An error status, 400 to 599. */
  status?: number
}

/**
 * The base of every api-blocks error. A subclass sets a static `kind` (a name unique across
 * api-blocks, such as `'idempotency.IdempotencyError'`) so that `instanceof` it holds across
 * duplicate installs, and usually overrides `toProblem()` to answer from the problem catalog.
 *
 * Without an override, `toProblem()` answers an `about:blank` problem (RFC 9457 §4.2.1) whose
 * title is the status's reason phrase; below 500 the message is the `detail`, from 500 on
 * nothing of the error is shown.
 *
 * @example
 * ```ts
 * class PaymentError extends ApiBlocksError<'CARD_DECLINED'> {
 *   static override readonly kind: string = 'shop.PaymentError'
 * }
 * const error = new PaymentError('CARD_DECLINED', 'The card was declined.', { status: 402 })
 * error instanceof ApiBlocksError // true, even for a PaymentError of another copy
 * error.toProblem() // { type: 'about:blank', title: 'Payment Required', status: 402, detail: … }
 * ```
 */
export class ApiBlocksError<Code extends string = string> extends Error implements ProblemSource {
  /** The name `instanceof` recognises across duplicate installs; every subclass sets its own. */
  static readonly kind: string = 'core.ApiBlocksError'

  /** The stable machine code, UPPER_SNAKE_CASE. */
  readonly code: Code
  /** The HTTP status this error answers. */
  readonly status: number

  constructor(code: Code, message: string, options?: ApiBlocksErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    const status = options?.status ?? 500
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`An error status is 400 to 599, got ${status}`)
    }
    this.name = new.target.name
    this.code = code
    this.status = status
    const kinds: string[] = []
    for (
      let klass: unknown = new.target;
      typeof klass === 'function' && klass !== Error;
      klass = Object.getPrototypeOf(klass)
    ) {
      if (Object.hasOwn(klass, 'kind')) kinds.push((klass as unknown as { kind: string }).kind)
    }
    Object.defineProperty(this, KINDS, { value: kinds })
  }

  /** The problem this error answers with (see the class description for the default). */
  toProblem(): ProblemDetails {
    const problem: ProblemDetails = {
      type: 'about:blank',
      title: PHRASES[this.status] ?? (this.status < 500 ? 'Client Error' : 'Server Error'),
      status: this.status,
    }
    if (this.status < 500) problem.detail = this.message
    return problem
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was called on
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (typeof value !== 'object' || value === null) return false
    const kinds = (value as { [KINDS]?: unknown })[KINDS]
    // Only a class that names its own kind is recognised by it; a subclass without one by the
    // prototype chain alone.
    // biome-ignore lint/complexity/noThisInStatic: as above
    if (!Array.isArray(kinds) || !Object.hasOwn(this, 'kind')) return false
    // biome-ignore lint/complexity/noThisInStatic: as above
    return kinds.includes((this as { kind: string }).kind)
  }
}
