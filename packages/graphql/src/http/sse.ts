/**
 * GraphQL over server-sent events on graphql-sse's handler, distinct-connections mode only
 * (graphql-sse PROTOCOL.md, "Distinct connections mode"): a GraphQL-over-HTTP request with
 * `Accept: text/event-stream` is answered with one event stream for its one operation, `next`
 * events then `complete`. Single-connection mode (a PUT reservation, then operations POSTed
 * against its token) is not offered: graphql-sse keeps its reservations in the memory of one
 * instance, so behind a load balancer they would be lost.
 *
 * @module
 */
import type { ExecutionResult, GraphQLSchema } from 'graphql'
import type { OperationArgs, Response as RawResponse } from 'graphql-sse'
import { createHandler } from 'graphql-sse'
import { isAsyncIterable } from '../iterator.ts'
import type { AdmitOptions, Admitted } from './admit.ts'
import { admit, executionArgs } from './admit.ts'
import { maskError } from './format.ts'
import type { OperationRequest } from './operation.ts'
import { Pacer, paced } from './pace.ts'
import { readOperationRequest } from './request.ts'

/**
 * Whether `request` asks for an event stream (graphql-sse's client sends exactly
 * `Accept: text/event-stream`; `EventSource` sends it too).
 *
 * @example
 * ```ts
 * isEventStreamRequest(new Request('http://x/graphql', { headers: { accept: 'text/event-stream' } })) // true
 * ```
 */
export function isEventStreamRequest(request: Request): boolean {
  const accept = request.headers.get('accept')
  return accept !== null && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)
}

interface EventStreamOptions {
  readonly schema: GraphQLSchema
  readonly rootValue: unknown
  readonly admission: AdmitOptions
  readonly limitOf: (request: Request) => number
  readonly withCost: (result: ExecutionResult, admitted: Admitted) => ExecutionResult
  readonly report: (error: unknown) => void
}

/** What travels with one request through graphql-sse's callbacks. */
interface StreamExchange {
  readonly request: Request
  readonly headers: Headers
  readonly pacer: Pacer
  readonly params: OperationRequest
  admitted?: Admitted
}

const encoder = new TextEncoder()
const SSE_HEADERS: Readonly<Record<string, string>> = {
  accept: 'text/event-stream',
  'content-type': 'application/json',
}

/** The events of a graphql-sse answer as a byte stream, its operation ended when the client goes. */
function toBody(
  events: AsyncGenerator<string, void, undefined>,
  signal: AbortSignal,
  pacer: Pacer,
): ReadableStream<Uint8Array> {
  const end = (): void => {
    events.return(undefined).catch(() => undefined)
  }
  if (signal.aborted) end()
  else signal.addEventListener('abort', end, { once: true })
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await events.next()
      if (value !== undefined) {
        controller.enqueue(encoder.encode(value))
        if (value.startsWith('event: next')) pacer.sent()
      }
      if (done === true) {
        signal.removeEventListener('abort', end)
        controller.close()
      }
    },
    async cancel() {
      signal.removeEventListener('abort', end)
      await events.return(undefined)
    },
  })
}

/**
 * The event-stream side of the endpoint: the same request reading, preparer, rate limit and
 * context as the HTTP side; refusals (validation, guards, cost) arrive as a `next` event with
 * the errors, then `complete`, as graphql-sse's PROTOCOL requires.
 *
 * @example
 * ```ts
 * const events = createEventStreamHandler({ schema, rootValue, admission, limitOf, withCost, report })
 * ```
 */
export function createEventStreamHandler(
  options: EventStreamOptions,
): (request: Request) => Promise<Response> {
  const { schema, rootValue, admission, limitOf, withCost, report } = options
  const mask = (result: ExecutionResult): ExecutionResult =>
    result.errors === undefined
      ? result
      : { ...result, errors: result.errors.map((error) => maskError(error, report)) }
  const sse = createHandler<Request, StreamExchange, never>({
    schema,
    // Distinct connections only: no stream tokens, so no PUT reservations.
    authenticate: () => null,
    async onSubscribe(req) {
      const exchange = req.context
      const outcome = await admit(
        admission,
        exchange.request,
        exchange.params,
        exchange.headers,
        true,
      )
      if (!('prepared' in outcome)) {
        const errors = outcome.errors.map((error) => maskError(error, report))
        if (outcome.status !== undefined && outcome.status >= 400) {
          // Refused before any stream: a rate limit (429 with Retry-After), a mutation over
          // GET (405), a malformed request (400) are HTTP answers, as without the stream.
          const headers: Record<string, string> = {
            'content-type': 'application/json; charset=utf-8',
          }
          for (const [name, value] of exchange.headers) headers[name] = value
          return [JSON.stringify({ errors }), { status: outcome.status, statusText: '', headers }]
        }
        // Document refusals: one `next` event with the errors, then `complete` (graphql-sse
        // PROTOCOL; it takes a result without `data` for execution arguments, so the errors
        // are handed over as a one-event stream).
        return (async function* refusal() {
          yield { errors }
        })()
      }
      exchange.admitted = outcome
      return executionArgs(schema, outcome, rootValue) as OperationArgs<never>
    },
    onOperation(_ctx, req, _args, result) {
      // A subscription is pulled only while its events are being written out.
      if (isAsyncIterable(result)) return paced(result, req.context.pacer)
      return undefined
    },
    onNext(_ctx, req, result) {
      const { admitted } = req.context
      const masked = mask(result as ExecutionResult)
      return admitted === undefined ? masked : withCost(masked, admitted)
    },
  })
  return async (request) => {
    const params = await readOperationRequest(request, limitOf(request))
    if ('status' in params) {
      admission.onEvent?.({
        type: 'rejected',
        code: String(params.error.extensions['code']),
        request,
      })
      return Response.json(
        { errors: [params.error] },
        { status: params.status, headers: params.headers ?? {} },
      )
    }
    const exchange: StreamExchange = { request, headers: new Headers(), params, pacer: new Pacer() }
    // graphql-sse checks the members itself, with uncoded errors, and insists on a string
    // `query` (ours may come by id: APQ, documentId). onSubscribe reads the parameters from
    // the exchange, checked by the preparer, so graphql-sse gets a request it always accepts.
    const [body, init]: RawResponse = await sse({
      method: 'POST',
      url: request.url,
      headers: { get: (name) => SSE_HEADERS[name.toLowerCase()] ?? request.headers.get(name) },
      body: { query: '' },
      raw: request,
      context: exchange,
    })
    const headers = new Headers(init.headers)
    for (const [name, value] of exchange.headers) headers.set(name, value)
    const stream =
      body === null || typeof body === 'string'
        ? body
        : toBody(body, request.signal, exchange.pacer)
    return new Response(stream, { status: init.status, statusText: init.statusText, headers })
  }
}
