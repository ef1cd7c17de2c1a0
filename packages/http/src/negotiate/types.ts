// The results of negotiation, in a file of their own: the context key of `negotiation()`
// (internal/keys.ts) types its value with them without importing the negotiators.

/**
 * The outcome of one negotiation: the choice and the request fields it depended on.
 *
 * @example
 * ```ts
 * const media: Negotiated = { choice: 'application/json', vary: ['Accept'] }
 * ```
 */
export interface Negotiated<T = string> {
  /** The chosen offer, or `undefined` when none is acceptable. */
  choice: T | undefined
  /** Field names to merge into `Vary` (always the header that was consulted). */
  vary: string[]
}

/**
 * The result of `negotiate()`: one choice per dimension offered.
 *
 * @example
 * ```ts
 * const result: Negotiation = { type: 'application/json', language: 'en', encoding: undefined, vary: ['Accept'] }
 * ```
 */
export interface Negotiation {
  /** The media type, or `undefined` when none is acceptable (or none was offered). */
  type: string | undefined
  /** The language: the best match, else the default language. */
  language: string | undefined
  /** The content coding, or `undefined` when none is acceptable (or none was offered). */
  encoding: string | undefined
  /** Every request field consulted, to merge into `Vary`. */
  vary: string[]
}
