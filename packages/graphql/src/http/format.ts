/**
 * What leaves the server of an error: every error gets a code, and errors that are not
 * GraphQL errors (a resolver's bug, a database failure) are masked.
 *
 * @module
 */
import { GraphQLError } from 'graphql'
import { copyError } from './recode.ts'

/**
 * `error` as the client sees it. A `GraphQLError` keeps its message; one without a code gets
 * `INTERNAL_SERVER_ERROR` (graphql-js's own execution errors: a null in a non-null field). An
 * error caused by something that is not a `GraphQLError` (a resolver threw an `Error`), or any
 * other `Error`, is masked: "Internal server error.", code `INTERNAL_SERVER_ERROR`, its path
 * and locations kept, and `report` is told about the original.
 *
 * @example
 * ```ts
 * const errors = result.errors?.map((error) => maskError(error, console.error))
 * ```
 */
export function maskError(
  error: Readonly<GraphQLError | Error>,
  report?: (error: unknown) => void,
): GraphQLError {
  if (!(error instanceof GraphQLError)) {
    report?.(error)
    return new GraphQLError('Internal server error.', {
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    })
  }
  const original = error.originalError
  const masked = original !== undefined && original !== null && !(original instanceof GraphQLError)
  if (!masked && typeof error.extensions['code'] === 'string') return error
  if (masked) report?.(original)
  return copyError(error, masked ? 'Internal server error.' : error.message, {
    ...(masked ? {} : error.extensions),
    code: 'INTERNAL_SERVER_ERROR',
  })
}
