/**
 * What the client sees of an error on the WebSocket: coded errors as they are, anything else
 * masked (docs/spec.md §7.1: internal errors never reach the client).
 *
 * @module
 */
import type { GraphQLFormattedError } from 'graphql'
import { GraphQLError } from 'graphql'

// graphql 16 records the underlying error as `originalError`; 17 as `cause` (graphql-ws 6
// wraps an error thrown by a subscription's stream with `cause` on 17).
function sourceOf(error: GraphQLError): unknown {
  return error.originalError ?? (error as { cause?: unknown }).cause
}

/**
 * The errors of a `next` or `error` message as sent: an error with a string `extensions.code`
 * made by this package or a resolver (a `GraphQLError`, such as `codedError`) is kept; any other
 * (a resolver's `Error`, a graphql-js message about a server bug) becomes `Internal server
 * error.` with code `INTERNAL_SERVER_ERROR`, its `locations` and `path` kept, and is reported.
 */
export function formatErrors(
  errors: readonly GraphQLError[],
  report: (error: unknown) => void,
): GraphQLFormattedError[] {
  return errors.map((error) => {
    const source = sourceOf(error)
    const coded = typeof error.extensions?.['code'] === 'string'
    if (coded && (source === undefined || source instanceof GraphQLError)) return error.toJSON()
    report(source ?? error)
    const { locations, path } = error.toJSON()
    return {
      message: 'Internal server error.',
      ...(locations !== undefined ? { locations } : {}),
      ...(path !== undefined ? { path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    }
  })
}
