/**
 * The one error model of @api-blocks/graphql. Inside a GraphQL response every error is a
 * `GraphQLError` whose `extensions.code` is a {@link GraphQLErrorCode} (docs/spec.md §2.1 and
 * §7.1: clients and operators count failures by it), plus the numbers that explain it (for a
 * limit: `limit` and `actual`).
 *
 * Codes already used by Apollo Server and Apollo Client keep their spelling
 * (`GRAPHQL_PARSE_FAILED`, `GRAPHQL_VALIDATION_FAILED`, `BAD_USER_INPUT`,
 * `PERSISTED_QUERY_NOT_FOUND`, `PERSISTED_QUERY_NOT_SUPPORTED`, `INTERNAL_SERVER_ERROR`), so
 * existing clients react to them unchanged.
 *
 * @module
 */
import { GraphQLError } from 'graphql'

/**
 * Why a GraphQL request or field failed. Stable: switch on it in clients, logs and metrics.
 *
 * @example
 * ```ts
 * const code: GraphQLErrorCode = 'COST_LIMIT_EXCEEDED'
 * ```
 */
export type GraphQLErrorCode =
  /** The request is not a GraphQL request: not JSON, a member of the wrong type, `variables: []`, no document (HTTP 400). */
  | 'BAD_REQUEST'
  /** The body is over the handler's byte limit (HTTP 413). */
  | 'BODY_TOO_LARGE'
  /** The document does not parse. */
  | 'GRAPHQL_PARSE_FAILED'
  /** The document has more tokens than `maxTokens`; `limit` says how many are allowed. */
  | 'TOKEN_LIMIT_EXCEEDED'
  /** The document fails the rules of the GraphQL specification (graphql-js `specifiedRules`). */
  | 'GRAPHQL_VALIDATION_FAILED'
  /** No operation of the document matches `operationName`, or several exist and none is named. */
  | 'OPERATION_NOT_FOUND'
  /** The operation's variables do not coerce to their declared types. */
  | 'BAD_USER_INPUT'
  /** Fields nest deeper than `maxDepth` (`limit`, `actual`). */
  | 'DEPTH_LIMIT_EXCEEDED'
  /** More aliases than `maxAliases` (`limit`, `actual`). */
  | 'ALIAS_LIMIT_EXCEEDED'
  /** More directive uses than `maxDirectives` (`limit`, `actual`). */
  | 'DIRECTIVE_LIMIT_EXCEEDED'
  /** More field selections, fragments expanded, than `maxNodes` (`limit`, `actual`). */
  | 'NODE_LIMIT_EXCEEDED'
  /**
   * More selections sharing one response path (fragments and same-named fields merged) than
   * `maxFieldRepeats` (`limit`, `actual`, `field`: the last response name of the path).
   */
  | 'FIELD_REPEAT_LIMIT_EXCEEDED'
  /** The requested cost is over `maxCost` (`limit`, `actual`). */
  | 'COST_LIMIT_EXCEEDED'
  /** A list field that requires a slicing argument (`first`/`last`) has none, or more than one (`field`, `arguments`). */
  | 'SLICING_ARGUMENT_REQUIRED'
  /** A slicing argument is over the page-size cap (`field`, `argument`, `limit`, `actual`). */
  | 'PAGE_SIZE_EXCEEDED'
  /** Introspection is switched off and the operation asks for `__schema` or `__type`. */
  | 'INTROSPECTION_DISABLED'
  /** A mutation sent over GET (HTTP 405 with `Allow: POST`). */
  | 'METHOD_NOT_ALLOWED'
  /** A persisted-query hash the server does not know (APQ: the client sends the query with the hash next). */
  | 'PERSISTED_QUERY_NOT_FOUND'
  /** Persisted queries are not enabled on this endpoint. */
  | 'PERSISTED_QUERY_NOT_SUPPORTED'
  /** The sha256 of the query sent is not the hash sent with it. */
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  /** Allow-list mode: a document that is not registered (sent in full, or by an unknown id). */
  | 'PERSISTED_QUERY_ONLY'
  /** No principal: the request carries no valid credentials. */
  | 'UNAUTHENTICATED'
  /** The principal lacks a scope the field or operation requires (`scopes` lists them). */
  | 'FORBIDDEN'
  /** The rate limit refuses the operation's cost (`retryAfterSeconds`). */
  | 'RATE_LIMITED'
  /** A resolver failed in a way the client cannot act on; the message is masked. */
  | 'INTERNAL_SERVER_ERROR'

/**
 * Makes a `GraphQLError` with `extensions.code` set, then `extensions` merged after it.
 *
 * @example
 * ```ts
 * throw codedError('FORBIDDEN', 'This field needs the scope read:orders.', { scopes: ['read:orders'] })
 * ```
 */
export function codedError(
  code: GraphQLErrorCode,
  message: string,
  extensions?: Readonly<Record<string, unknown>>,
): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extensions } })
}
