/** The outcome of one negotiation: the choice and the request fields it depended on. */
export interface Negotiated<T = string> {
  /** The chosen offer, or `undefined` when none is acceptable. */
  choice: T | undefined
  /** Field names to merge into `Vary` (always the header that was consulted). */
  vary: string[]
}
