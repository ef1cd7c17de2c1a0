/**
 * Parsing with the token limit: graphql-js `parse` never sees more than `maxTokens` tokens, so a
 * hostile document costs at most that much lexing before the guard pass (GraphQL spec §2.1,
 * "Source Text": the lexer; the limit is graphql-js's `maxTokens` parse option).
 *
 * @module
 */
import { type DocumentNode, GraphQLError, parse } from 'graphql'
import type { GraphQLErrorCode } from './error.ts'
import { DEFAULT_GUARD_OPTIONS } from './guards/defaults.ts'

// graphql-js 16 says "more that N tokens", 17 says "more than N tokens".
const TOKEN_LIMIT = /Document contains more th(?:at|an) \d+ tokens/

function syntaxError(
  code: GraphQLErrorCode,
  message: string,
  cause: unknown,
  extensions?: object,
): GraphQLError {
  const positions = cause instanceof GraphQLError ? cause.positions : undefined
  const source = cause instanceof GraphQLError ? cause.source : undefined
  return new GraphQLError(message, {
    ...(source === undefined ? {} : { source }),
    ...(positions === undefined ? {} : { positions }),
    extensions: { code, ...extensions },
  })
}

/**
 * Parses a GraphQL document with a token limit, and never throws: a document over the limit
 * gives a `TOKEN_LIMIT_EXCEEDED` error with `extensions.limit`, any other syntax error a
 * `GRAPHQL_PARSE_FAILED` error with its `locations`.
 *
 * @param source The document text.
 * @param options `maxTokens` (default 10,000, {@link DEFAULT_GUARD_OPTIONS}).
 * @returns The document (with locations), or one coded error.
 *
 * @example
 * ```ts
 * const document = parseDocument('{ orders(first: 5) { edges { node { id } } } }')
 * if (document instanceof GraphQLError) console.log(document.extensions['code'])
 * ```
 */
export function parseDocument(
  source: string,
  options?: { readonly maxTokens?: number },
): DocumentNode | GraphQLError {
  const maxTokens = options?.maxTokens ?? DEFAULT_GUARD_OPTIONS.maxTokens
  try {
    return parse(source, { maxTokens, noLocation: false })
  } catch (error) {
    if (error instanceof GraphQLError) {
      if (TOKEN_LIMIT.test(error.message)) {
        return syntaxError(
          'TOKEN_LIMIT_EXCEEDED',
          `The document has more than ${maxTokens} tokens.`,
          error,
          { limit: maxTokens },
        )
      }
      return syntaxError('GRAPHQL_PARSE_FAILED', error.message, error)
    }
    // The parser recurses per nesting level: a document nested deeper than the stack allows
    // (about 2,000 levels fit in 10,000 tokens) overflows it. Report it as a parse failure.
    const message =
      error instanceof RangeError
        ? 'Syntax Error: The document nests too deeply to parse.'
        : 'Syntax Error: The document could not be parsed.'
    return syntaxError('GRAPHQL_PARSE_FAILED', message, error)
  }
}
