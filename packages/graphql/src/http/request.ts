/**
 * Reading a GraphQL request's parameters from a Fetch `Request` (GraphQL-over-HTTP §4.3 GET,
 * §4.4 POST, and the persisted-documents appendix): GET query strings and POST JSON bodies, each within a byte limit, every failure
 * one coded error with its HTTP status.
 *
 * @module
 */
import { BodyReadError, readRequestBody } from '@api-blocks/core'
import type { GraphQLError } from 'graphql'
import type { GraphQLErrorCode } from '../error.ts'
import { codedError } from '../error.ts'
import type { OperationRequest } from './operation.ts'

/**
 * A request that is not a GraphQL request: its status, headers and one coded error.
 *
 * @example
 * ```ts
 * const failure: RequestFailure = { status: 413, error: codedError('BODY_TOO_LARGE', 'The body is larger than 102400 bytes.') }
 * ```
 */
export interface RequestFailure {
  readonly status: number
  readonly error: GraphQLError
  readonly headers?: Readonly<Record<string, string>>
}

const fail = (
  status: number,
  code: GraphQLErrorCode,
  message: string,
  headers?: Readonly<Record<string, string>>,
  extensions?: Readonly<Record<string, unknown>>,
): RequestFailure => ({
  status,
  error: codedError(code, message, extensions),
  ...(headers ? { headers } : {}),
})

const decoder = new TextDecoder('utf-8', { fatal: true })

/** JSON members of a GET query string (GraphQL-over-HTTP §4.3: `variables` and `extensions` are JSON strings). */
function jsonParam(params: URLSearchParams, name: string): unknown {
  const text = params.get(name)
  return text === null || text === '' ? undefined : JSON.parse(text)
}

/**
 * The parameters of `request`, or why it is refused: 405 for methods other than GET and POST,
 * 414 for a query string over `maxBytes`, 415 for a POST body that is not `application/json`,
 * 413 for a body over `maxBytes`, 400 for JSON that does not parse, a batch (an array) or
 * anything else that is not an object. Member types are checked by the preparer.
 *
 * @example
 * ```ts
 * const params = await readOperationRequest(request, 100 * 1024)
 * if ('status' in params) console.log(params.status, params.error.extensions.code)
 * ```
 */
export async function readOperationRequest(
  request: Request,
  maxBytes: number,
): Promise<OperationRequest | RequestFailure> {
  if (request.method === 'GET') {
    const url = request.url
    const start = url.indexOf('?')
    const search = start === -1 ? '' : url.slice(start + 1)
    // RFC 9110 §15.5.15: 414 URI Too Long; the query string holds what a POST body would.
    if (search.length > maxBytes) {
      return fail(
        414,
        'BODY_TOO_LARGE',
        `The query string is longer than ${maxBytes} bytes.`,
        undefined,
        {
          limit: maxBytes,
        },
      )
    }
    const params = new URLSearchParams(search)
    try {
      return {
        query: params.get('query') ?? undefined,
        operationName: params.get('operationName') ?? undefined,
        documentId: params.get('documentId') ?? undefined,
        variables: jsonParam(params, 'variables'),
        extensions: jsonParam(params, 'extensions'),
      }
    } catch {
      return fail(400, 'BAD_REQUEST', 'variables and extensions must be JSON in a GET request.')
    }
  }
  if (request.method !== 'POST') {
    return fail(405, 'METHOD_NOT_ALLOWED', 'A GraphQL request is a GET or a POST.', {
      allow: 'GET, POST',
    })
  }
  // GraphQL-over-HTTP §4.4: a server MUST support application/json in UTF-8, and assume UTF-8
  // when no charset is given; §5.4.1: a request that is not well-formed gets a 4xx.
  const [mediaType = '', ...parameters] = (request.headers.get('content-type') ?? '')
    .toLowerCase()
    .split(';')
    .map((part) => part.trim())
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))
  if (
    mediaType !== 'application/json' ||
    (charset !== undefined && !/^charset="?utf-?8"?$/.test(charset))
  ) {
    return fail(415, 'BAD_REQUEST', 'A GraphQL POST body is application/json in UTF-8.', {
      accept: 'application/json',
    })
  }
  let text: string
  try {
    text = decoder.decode(await readRequestBody(request, { maxBytes }))
  } catch (error) {
    if (error instanceof BodyReadError && error.code === 'BODY_TOO_LARGE') {
      return fail(413, 'BODY_TOO_LARGE', `The body is larger than ${maxBytes} bytes.`, undefined, {
        limit: maxBytes,
      })
    }
    return fail(400, 'BAD_REQUEST', 'The body could not be read as UTF-8.')
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return fail(400, 'BAD_REQUEST', 'The body is not valid JSON.')
  }
  if (Array.isArray(body)) {
    return fail(400, 'BAD_REQUEST', 'Batched requests (a JSON array) are not supported.')
  }
  if (typeof body !== 'object' || body === null) {
    return fail(400, 'BAD_REQUEST', 'The body must be a JSON object.')
  }
  const { query, variables, operationName, extensions, documentId } = body as Record<
    string,
    unknown
  >
  return { query, variables, operationName, extensions, documentId }
}
