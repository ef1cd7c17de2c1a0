/**
 * The rules of the behaviour suite, each with a stable id and its RFC 2119 level, as the audits
 * of graphql-http have: a failing test names the rule it checks (`[set-cookie-lines] MUST send
 * each Set-Cookie as its own field line`). An id never changes meaning and is never reused; a
 * rule that goes away leaves its id retired.
 *
 * @module
 */

/**
 * One rule of the suite.
 *
 * @example
 * ```ts
 * const rule: AdapterRule = { id: 'head', level: 'MUST', rule: 'answer HEAD with the header section and no body' }
 * ```
 */
export interface AdapterRule {
  /** Stable, kebab-case: how a failure, a changelog or an issue names the rule. */
  readonly id: string
  /** MUST: every adapter passes. SHOULD: expected, a documented exception is possible. */
  readonly level: 'MUST' | 'SHOULD'
  /** What an adapter does, completing the sentence "An adapter MUST/SHOULD …". */
  readonly rule: string
}

/**
 * Every rule of the suite, in the order the suite runs them.
 *
 * @example
 * ```ts
 * const musts = adapterRules.filter((rule) => rule.level === 'MUST').length
 * ```
 */
export const adapterRules: readonly AdapterRule[] = [
  { id: 'status-code', level: 'MUST', rule: 'answer the status code the handler chose' },
  { id: 'set-cookie-lines', level: 'MUST', rule: 'send each Set-Cookie as its own field line' },
  { id: 'repeated-fields', level: 'MUST', rule: 'keep every value of a repeated header field' },
  {
    id: 'stream-chunks',
    level: 'MUST',
    rule: 'stream a response body chunk by chunk as the handler produces it',
  },
  { id: 'large-body', level: 'MUST', rule: 'deliver a large streamed response body intact' },
  {
    id: 'whole-body-length',
    level: 'SHOULD',
    rule: 'send a body the handler gave whole with Content-Length, not chunked (RFC 9112 §6.3)',
  },
  {
    id: 'no-content',
    level: 'MUST',
    rule: 'send no body and no Content-Length with 204 (RFC 9110 §15.3.5, §8.6)',
  },
  {
    id: 'head',
    level: 'MUST',
    rule: 'answer HEAD with the header section and no body (RFC 9110 §9.3.2)',
  },
  {
    id: 'head-length',
    level: 'SHOULD',
    rule: 'state the Content-Length of a whole body in the answer to HEAD (RFC 9110 §9.3.2)',
  },
  {
    id: 'request-headers',
    level: 'MUST',
    rule: 'hand the request headers to the handler (X-Request-Id round trip)',
  },
  {
    id: 'request-body',
    level: 'MUST',
    rule: 'stream a 1 MiB binary request body to the handler intact',
  },
  {
    id: 'body-limit',
    level: 'MUST',
    rule: 'let the handler stop reading at its body limit and answer a 413 problem',
  },
  {
    id: 'thrown-problem',
    level: 'MUST',
    rule: 'answer a thrown ProblemError with its status as application/problem+json',
  },
  {
    id: 'thrown-error',
    level: 'MUST',
    rule: 'answer a thrown Error with a 500 problem that does not reveal its message',
  },
  {
    id: 'client-disconnect',
    level: 'MUST',
    rule: 'survive a client that disconnects mid-response, and stop the stream',
  },
  {
    id: 'url-as-sent',
    level: 'MUST',
    rule: 'keep the query string and a percent-encoded path as sent',
  },
]

/**
 * The test title of the rule with `id`: `[id] LEVEL rule`. Throws for an unknown id.
 *
 * @example
 * ```ts
 * ruleTitle('head') // '[head] MUST answer HEAD with the header section and no body (RFC 9110 §9.3.2)'
 * ```
 */
export function ruleTitle(id: string): string {
  const found = adapterRules.find((rule) => rule.id === id)
  if (found === undefined) throw new Error(`No adapter rule has the id "${id}"`)
  return `[${found.id}] ${found.level} ${found.rule}`
}
