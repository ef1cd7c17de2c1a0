/**
 * Admission of one operation, shared by the HTTP handler and server-sent events: prepare it,
 * refuse it with the right status, charge its cost, build its context.
 *
 * @module
 */
import { principalOf } from '@api-blocks/core'
import type { ExecutionArgs, GraphQLError, GraphQLSchema, OperationDefinitionNode } from 'graphql'
import { codedError } from '../error.ts'
import type { OperationPreparer, OperationRequest, PreparedOperation } from './operation.ts'
import type { GraphQLRateLimit, ThrottleExtension } from './rate-limit.ts'
import { charge, chargeFor, rateLimitedError, throttleOf } from './rate-limit.ts'

/**
 * What the handler reports: each refusal by its code, each admitted operation with its cost.
 *
 * @example
 * ```ts
 * const onEvent = (event: GraphQLHandlerEvent) => {
 *   if (event.type === 'rejected') metrics.increment(`graphql.rejected.${event.code}`)
 * }
 * ```
 */
export type GraphQLHandlerEvent =
  | { readonly type: 'rejected'; readonly code: string; readonly request: Request }
  | {
      readonly type: 'operation'
      readonly operation: 'query' | 'mutation' | 'subscription'
      readonly operationName: string | undefined
      readonly cost: number
      readonly request: Request
    }

/**
 * The admission settings of an endpoint.
 *
 * @example
 * ```ts
 * const options: AdmitOptions = { preparer: createOperationPreparer({ schema }), report: console.error }
 * ```
 */
export interface AdmitOptions {
  readonly preparer: OperationPreparer
  readonly rateLimit?: GraphQLRateLimit | undefined
  readonly context?: ((request: Request, prepared: PreparedOperation) => unknown) | undefined
  readonly report: (error: unknown) => void
  readonly onEvent?: ((event: GraphQLHandlerEvent) => void) | undefined
}

/**
 * An admitted operation: what to execute, and what to add to its result.
 *
 * @example
 * ```ts
 * if ('prepared' in outcome) await execute({ schema, document: outcome.prepared.document, contextValue: outcome.contextValue })
 * ```
 */
export interface Admitted {
  readonly prepared: PreparedOperation
  readonly contextValue: unknown
  readonly throttle?: ThrottleExtension
}

/**
 * The graphql-js execution arguments of an admitted operation: what graphql-http's and
 * graphql-sse's `onSubscribe` hand back to run it.
 *
 * @example
 * ```ts
 * if ('prepared' in outcome) return executionArgs(schema, outcome, rootValue)
 * ```
 */
export function executionArgs(
  schema: GraphQLSchema,
  admitted: Admitted,
  rootValue: unknown,
): ExecutionArgs {
  const { prepared, contextValue } = admitted
  return {
    schema,
    document: prepared.document,
    operationName: prepared.operation.name?.value,
    variableValues: prepared.variableValues,
    contextValue,
    rootValue,
  }
}

/**
 * A refused operation: its errors, and its HTTP status when it is not GraphQL-over-HTTP's rule
 * for document errors (200 under `application/json`, 400 under
 * `application/graphql-response+json`).
 *
 * @example
 * ```ts
 * const refused: Refused = { status: 429, errors: [rateLimitedError(result, 13)] }
 * ```
 */
export interface Refused {
  readonly status?: number
  readonly errors: readonly GraphQLError[]
}

/** Status of a refusal that does not follow the media type's rule (200 or 400). */
const STATUS: Partial<Record<string, number>> = {
  BAD_REQUEST: 400,
  PERSISTED_QUERY_HASH_MISMATCH: 400,
  // Apollo Server answers both with 200, so that clients and proxies read the body.
  PERSISTED_QUERY_NOT_FOUND: 200,
  PERSISTED_QUERY_NOT_SUPPORTED: 200,
  METHOD_NOT_ALLOWED: 405,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
}

/**
 * Admits the operation `params` asks for, over `method` (GET refuses mutations), or refuses
 * it. `headers` collects response header fields (RateLimit, Allow, Cache-Control).
 *
 * @example
 * ```ts
 * const outcome = await admit(options, request, params, headers, false)
 * ```
 */
export async function admit(
  options: AdmitOptions,
  request: Request,
  params: OperationRequest,
  headers: Headers,
  streaming: boolean,
): Promise<Admitted | Refused> {
  const { preparer, rateLimit, report, onEvent } = options
  const refuse = async (errors: readonly GraphQLError[], charged: boolean): Promise<Refused> => {
    const code = String(errors[0]?.extensions['code'] ?? 'INTERNAL_SERVER_ERROR')
    onEvent?.({ type: 'rejected', code, request })
    // A refused document still costs its minimum: a flood of hostile documents spends quota.
    if (rateLimit !== undefined && !charged) {
      const result = await charge(rateLimit, request, 1, headers, report)
      if (result !== undefined && !result.allowed) {
        return { status: 429, errors: [rateLimitedError(result, 1)] }
      }
    }
    if (code === 'PERSISTED_QUERY_NOT_FOUND' || code === 'PERSISTED_QUERY_NOT_SUPPORTED') {
      // Apollo Server: the answer changes once the client registered the query.
      headers.set('cache-control', 'private, no-cache, must-revalidate')
    }
    if (code === 'METHOD_NOT_ALLOWED') headers.set('allow', 'POST')
    const status = STATUS[code]
    return status === undefined ? { errors } : { status, errors }
  }
  // Checked before the variables and the cost: a mutation over GET is refused for its method.
  const allow = (operation: OperationDefinitionNode): GraphQLError | undefined => {
    // GraphQL-over-HTTP §4.3 (GET): a mutation MUST NOT be executed over GET: 405, halt.
    if (operation.operation === 'mutation' && request.method === 'GET') {
      return codedError('METHOD_NOT_ALLOWED', 'Mutations are sent with POST.')
    }
    if (operation.operation === 'subscription' && !streaming) {
      return codedError(
        'BAD_REQUEST',
        'Subscribe with Accept: text/event-stream or over a WebSocket.',
      )
    }
    return undefined
  }
  const prepared = await preparer.prepare(params, { context: request, allow })
  if (Array.isArray(prepared)) return refuse(prepared as readonly GraphQLError[], false)
  const { operation, cost } = prepared as PreparedOperation
  let throttle: ThrottleExtension | undefined
  if (rateLimit !== undefined) {
    const units = chargeFor(cost)
    const result = await charge(rateLimit, request, units, headers, report)
    if (result !== undefined && !result.allowed) {
      return refuse([rateLimitedError(result, units)], true)
    }
    if (result !== undefined) throttle = throttleOf(result)
  }
  // Admitted: only now may an APQ request's document be stored.
  await (prepared as PreparedOperation).register()
  onEvent?.({
    type: 'operation',
    operation: operation.operation,
    operationName: operation.name?.value,
    cost,
    request,
  })
  const contextValue = await (options.context ?? defaultContext)(
    request,
    prepared as PreparedOperation,
  )
  return {
    prepared: prepared as PreparedOperation,
    contextValue,
    ...(throttle ? { throttle } : {}),
  }
}

function defaultContext(request: Request): unknown {
  return { request, principal: principalOf(request) }
}
