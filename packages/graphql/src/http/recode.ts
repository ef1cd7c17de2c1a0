/**
 * Giving graphql-js's own errors (validation, variable coercion) our codes.
 *
 * @module
 */
import { GraphQLError } from 'graphql'
import type { GraphQLErrorCode } from '../error.ts'

/** graphql-js's suggestion sentence: " Did you mean "x"?" or " Did you mean "x", "y", or "z"?". */
const SUGGESTION = /\s*Did you mean [^?]*\?/g

/**
 * A copy of `error` (message, locations, path kept) with `extensions.code` set to `code`, and
 * its "Did you mean …?" suggestions removed when `maskSuggestions` (they reveal the schema when
 * introspection is off).
 *
 * @example
 * ```ts
 * const coded = recode(validationError, 'GRAPHQL_VALIDATION_FAILED', true)
 * ```
 */
export function recode(
  error: GraphQLError,
  code: GraphQLErrorCode,
  maskSuggestions: boolean,
): GraphQLError {
  const message = maskSuggestions ? error.message.replace(SUGGESTION, '') : error.message
  return copyError(error, message, { ...error.extensions, code })
}

/**
 * A copy of `error` (locations, source and path kept) with another message and extensions.
 *
 * @example
 * ```ts
 * const masked = copyError(error, 'Internal server error.', { code: 'INTERNAL_SERVER_ERROR' })
 * ```
 */
export function copyError(
  error: GraphQLError,
  message: string,
  extensions: Readonly<Record<string, unknown>>,
): GraphQLError {
  return new GraphQLError(message, {
    ...(error.nodes !== undefined ? { nodes: error.nodes } : {}),
    ...(error.source !== undefined ? { source: error.source } : {}),
    ...(error.positions !== undefined ? { positions: error.positions } : {}),
    ...(error.path !== undefined ? { path: error.path } : {}),
    extensions,
  })
}
