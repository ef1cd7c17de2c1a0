/**
 * GraphQL over HTTP as a Fetch handler, on graphql-http's server-agnostic handler: POST JSON and
 * GET, the GraphQL-over-HTTP status codes, persisted documents, the guard pass, the cost in
 * `extensions.cost` charged to a rate limit, and server-sent events on the same URL.
 *
 * @module
 */
import { bodyLimitOf } from '@api-blocks/core'
import type { ExecutionResult, GraphQLError } from 'graphql'
import type { OperationArgs, Response as RawResponse, RequestParams } from 'graphql-http'
import { createHandler } from 'graphql-http'
import type { Admitted, GraphQLHandlerEvent } from './admit.ts'
import { admit, executionArgs } from './admit.ts'
import { maskError } from './format.ts'
import type { OperationRequest, PreparedOperation, PreparerOptions } from './operation.ts'
import { createOperationPreparer } from './operation.ts'
import type { GraphQLRateLimit } from './rate-limit.ts'
import { readOperationRequest } from './request.ts'
import { createEventStreamHandler, isEventStreamRequest } from './sse.ts'

/** Default body limit: 100 KiB, a large document with its variables. */
const DEFAULT_MAX_BODY_BYTES = 100 * 1024

/**
 * Options of {@link createGraphQLHandler}: those of the operation preparer, and what only HTTP
 * has.
 *
 * @example
 * ```ts
 * const options: GraphQLHandlerOptions = { schema, guards: { maxCost: 5000 }, maxBodyBytes: 64 * 1024 }
 * ```
 */
export interface GraphQLHandlerOptions extends PreparerOptions {
  /**
   * The context value of resolvers (default `{ request, principal: principalOf(request) }`),
   * built once the operation is admitted (it receives the cost). Cost estimators
   * (`guards.estimators`) run before it and receive the Fetch `Request` as their `context`.
   */
  readonly context?: (request: Request, prepared: PreparedOperation) => unknown
  /** The root value of every operation. */
  readonly rootValue?: unknown
  /**
   * Largest body (and GET query string) read, in bytes (default 100 KiB); a per-request limit
   * set with core's `setBodyLimit` wins. Over it: 413 (414 for a query string), `BODY_TOO_LARGE`.
   */
  readonly maxBodyBytes?: number
  /**
   * Charge each operation's cost, `max(1, ceil(cost))`, before it runs; refused: 429
   * `RATE_LIMITED`. A document refused (parse, validation, guards, cost) is charged 1. A request
   * refused while it is read, before any document (400 malformed, 405 method, 413/414 too large,
   * 415 media type, 406 Accept), is not charged and carries no RateLimit header fields.
   */
  readonly rateLimit?: GraphQLRateLimit
  /** Told about every error the client only sees masked (a resolver's `Error`, a store failure). */
  readonly onError?: (error: unknown) => void
  /** Told about each refusal (by code) and each admitted operation (with its cost). */
  readonly onEvent?: (event: GraphQLHandlerEvent) => void
}

/** What travels with one request through graphql-http's callbacks. */
interface Exchange {
  readonly request: Request
  readonly headers: Headers
  params?: OperationRequest
  admitted?: Admitted
}

/**
 * The media type of an answer: graphql-http picks it from Accept the same way (the first
 * acceptable entry), for answers it does not build itself.
 */
function responseType(request: Request): string {
  for (const entry of (request.headers.get('accept') ?? '*/*').toLowerCase().split(',')) {
    const type = entry.split(';')[0]?.trim()
    if (type === 'application/graphql-response+json') return 'application/graphql-response+json'
    if (type === 'application/json' || type === 'application/*' || type === '*/*') break
  }
  return 'application/json'
}

/**
 * The status of a refusal under the response's media type. Apollo Server answers the APQ
 * errors (`PERSISTED_QUERY_NOT_FOUND`, `PERSISTED_QUERY_NOT_SUPPORTED`) with 200, which
 * `application/json` allows; GraphQL-over-HTTP §5.4.2 requires a 4xx for a response without
 * `data` under `application/graphql-response+json`: 404 for an unknown document (as GraphQL
 * Yoga answers), 400 otherwise. Apollo Client reads the code from either.
 */
function statusFor(request: Request, status: number, errors: readonly GraphQLError[]): number {
  if (status !== 200 || responseType(request) === 'application/json') return status
  return errors[0]?.extensions['code'] === 'PERSISTED_QUERY_NOT_FOUND' ? 404 : 400
}

function errorResponse(
  request: Request,
  status: number,
  errors: readonly GraphQLError[],
  headers?: Readonly<Record<string, string>>,
): RawResponse {
  return [
    JSON.stringify({ errors }),
    {
      status,
      statusText: '',
      headers: { ...headers, 'content-type': `${responseType(request)}; charset=utf-8` },
    },
  ]
}

/**
 * A Fetch handler, `(request: Request) => Promise<Response>`, serving GraphQL at the URL it is
 * mounted on: POST `application/json` and GET for queries, `Accept: text/event-stream` for
 * server-sent events (graphql-sse, distinct connections: one operation per request). Every
 * GraphQL result is 200 `application/json`; a client accepting
 * `application/graphql-response+json` gets GraphQL-over-HTTP's statuses (400 for a document
 * that does not parse or validate). An APQ hash the server does not know
 * (`PERSISTED_QUERY_NOT_FOUND`) is 200 under `application/json`, as Apollo Server answers, and
 * 404 under `application/graphql-response+json`, which requires a 4xx for a response without
 * `data` (GraphQL-over-HTTP §5.4.2); Apollo Client retries with the query on either. An APQ
 * document is stored only once its operation is admitted (method, guards, cost, rate limit).
 * `variables` and `extensions` nest at most 64 levels (deeper: 400 `BAD_REQUEST` with
 * `limit`). It never throws: an internal failure is a masked 500.
 *
 * @example
 * ```ts
 * import { buildSchema } from 'graphql'
 * const schema = buildSchema('type Query { hello: String }')
 * const handler = createGraphQLHandler({ schema, rootValue: { hello: 'world' } })
 * const response = await handler(new Request('http://localhost/graphql?query={hello}'))
 * console.log(await response.json()) // { data: { hello: 'world' }, extensions: { cost: { requested: 0, limit: 1000 } } }
 * ```
 */
export function createGraphQLHandler(
  options: GraphQLHandlerOptions,
): (request: Request) => Promise<Response> {
  const { schema, rootValue, rateLimit } = options
  // Observers must not break requests: what they throw is dropped (onError) or reported (onEvent).
  const report = (error: unknown): void => {
    try {
      options.onError?.(error)
    } catch {}
  }
  const onEvent = (event: GraphQLHandlerEvent): void => {
    try {
      options.onEvent?.(event)
    } catch (error) {
      report(error)
    }
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new RangeError('maxBodyBytes must be a non-negative safe integer')
  }
  const preparer = createOperationPreparer({ ...options, onError: report })
  const admission = { preparer, rateLimit, context: options.context, report, onEvent }
  const limitOf = (request: Request): number => bodyLimitOf(request) ?? maxBodyBytes
  const withCost = (result: ExecutionResult, admitted: Admitted): ExecutionResult => ({
    ...result,
    extensions: {
      ...result.extensions,
      cost: { requested: admitted.prepared.cost, limit: admitted.prepared.maxCost },
      ...(admitted.throttle ? { throttle: admitted.throttle } : {}),
    },
  })

  const http = createHandler<Request, Exchange, never>({
    schema,
    formatError: (error) => maskError(error, report),
    async parseRequestParams(req) {
      const params = await readOperationRequest(req.raw, limitOf(req.raw))
      if ('status' in params) {
        onEvent({
          type: 'rejected',
          code: String(params.error.extensions['code']),
          request: req.raw,
        })
        return errorResponse(req.raw, params.status, [params.error], params.headers)
      }
      req.context.params = params
      // graphql-http reads nothing of it: onSubscribe answers every request.
      return params as RequestParams
    },
    async onSubscribe(req) {
      const exchange = req.context
      const outcome = await admit(
        admission,
        exchange.request,
        exchange.params ?? {},
        exchange.headers,
        false,
      )
      if (!('prepared' in outcome)) {
        const errors = outcome.errors.map((error) => maskError(error, report))
        if (outcome.status === undefined) return errors
        return errorResponse(req.raw, statusFor(req.raw, outcome.status, errors), errors)
      }
      exchange.admitted = outcome
      return executionArgs(schema, outcome, rootValue) as OperationArgs<never>
    },
    onOperation(req, _args, result) {
      const { admitted } = req.context
      return admitted === undefined ? undefined : withCost(result, admitted)
    },
  })
  const events = createEventStreamHandler({
    schema,
    rootValue,
    admission,
    limitOf,
    withCost,
    report,
  })

  return async (request) => {
    try {
      if (isEventStreamRequest(request)) return await events(request)
      const exchange: Exchange = { request, headers: new Headers() }
      const [body, init] = await http({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: null,
        raw: request,
        context: exchange,
      })
      const headers = new Headers(init.headers)
      for (const [name, value] of exchange.headers) headers.set(name, value)
      if (body === null && init.status === 406) {
        // graphql-http answers 406 without a body; every error of ours carries a code.
        headers.set('content-type', 'application/json; charset=utf-8')
        const error = {
          message: `Accept ${init.headers?.accept}.`,
          extensions: { code: 'BAD_REQUEST' },
        }
        return new Response(JSON.stringify({ errors: [error] }), { status: 406, headers })
      }
      return new Response(body, { status: init.status, statusText: init.statusText, headers })
    } catch (error) {
      report(error)
      return Response.json(
        {
          errors: [
            { message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
          ],
        },
        { status: 500 },
      )
    }
  }
}
