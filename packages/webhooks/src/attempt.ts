/**
 * What one delivery attempt came to, as the sender reports it and the retry policy reads it.
 * A failed delivery is a value, never an exception.
 *
 * @module
 */

/**
 * Why an attempt got no HTTP response:
 * - `'timeout'`: the deadline passed;
 * - `'connection'`: the connection failed (refused, reset, DNS, TLS);
 * - `'address-refused'`: the SSRF guard refused the address the host resolved to at connect
 *   time (or the URL is not one it sends to);
 * - `'invalid-delivery'`: nothing was sent because the delivery itself cannot be: its
 *   `webhook-id` or a secret is not valid, so it could not be signed. Every attempt would fail
 *   the same way, so the retry policy does not retry it.
 *
 * @example
 * ```ts
 * const reason: AttemptFailure = 'timeout'
 * ```
 */
export type AttemptFailure = 'timeout' | 'connection' | 'address-refused' | 'invalid-delivery'

/**
 * The outcome of one POST to a receiver. `response`: the receiver answered (any status, a 3xx
 * included: redirects are never followed). Otherwise no response came, and `failure` says why.
 *
 * @example
 * ```ts
 * const result: AttemptResult = { kind: 'response', status: 200, retryAfterMs: null, body: 'ok', latencyMs: 12 }
 * ```
 */
export type AttemptResult =
  | {
      kind: 'response'
      /** The HTTP status code. */
      status: number
      /** `Retry-After` in milliseconds (RFC 9110 §10.2.3, delay-seconds or an HTTP-date), `null` when absent or invalid. */
      retryAfterMs: number | null
      /** The start of the response body as text, truncated to the sender's limit (1 KiB by default). */
      body: string
      /** Milliseconds from the start of the request to the end of the (truncated) body. */
      latencyMs: number
    }
  | {
      kind: 'failure'
      failure: AttemptFailure
      /** A short description for the attempt log (no secrets, no payload). */
      message: string
      latencyMs: number
    }
