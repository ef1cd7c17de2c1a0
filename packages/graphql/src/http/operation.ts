/**
 * The operation preparer: everything between a GraphQL request's parameters and graphql-js
 * `execute`/`subscribe`, shared by the HTTP handler, server-sent events and the WebSocket
 * server, so that every transport applies the same checks in the same order and answers the
 * same codes.
 *
 * @module
 */
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from 'graphql'
import { GraphQLError, getVariableValues, Kind } from 'graphql'
import { codedError } from '../error.ts'
import { DEFAULT_GUARD_OPTIONS } from '../guards/index.ts'
import type { GuardOptions } from '../guards/options.ts'
import type { PersistedConfig } from '../persisted/apq.ts'
import { resolveDocument } from '../persisted/apq.ts'
import { MemoryPersistedDocumentStore } from '../persisted/memory.ts'
import type { PersistedDocumentStore } from '../persisted/store.ts'
import { createDocumentCache } from './documents.ts'
import { recode } from './recode.ts'

/**
 * The parameters of one GraphQL request as they arrived (a JSON body, a query string, a
 * `subscribe` message): every member is checked before use.
 *
 * @example
 * ```ts
 * const request: OperationRequest = { query: 'query ($id: ID!) { order(id: $id) { id } }', variables: { id: '1' } }
 * ```
 */
export interface OperationRequest {
  query?: unknown
  variables?: unknown
  operationName?: unknown
  extensions?: unknown
  /** GraphQL-over-HTTP Appendix A: the id of a persisted document (`sha256:<hex>` or a manifest's id). */
  documentId?: unknown
}

/**
 * An operation ready to execute: parsed, guarded, validated, its variables coerced and its
 * cost computed under them.
 *
 * @example
 * ```ts
 * const result = await execute({ schema, document: prepared.document, operationName: prepared.operation.name?.value, variableValues: prepared.variableValues })
 * ```
 */
export interface PreparedOperation {
  readonly document: DocumentNode
  /** The operation that runs (the one `operationName` names, or the only one). */
  readonly operation: OperationDefinitionNode
  /**
   * The variables as the client sent them (known to coerce): what `execute` and `subscribe`
   * take, since they coerce again themselves (a coerced enum or custom scalar would not).
   */
  readonly variableValues: Readonly<Record<string, unknown>>
  /** The requested cost (IBM "static" cost) under these variables. */
  readonly cost: number
  /** The largest cost admitted (`guards.maxCost`): `extensions.cost.limit` of results. */
  readonly maxCost: number
  /**
   * Stores the document under the hash an APQ request sent with it (Apollo APQ: hash and
   * query together); does nothing for any other request. Call it once the operation is
   * admitted (the transport allows its type, the rate limit its cost), so that a refused
   * operation is never stored. It never rejects: a store failure goes to `onError`.
   */
  register(): Promise<void>
}

/**
 * What {@link OperationPreparer.prepare} takes besides the request.
 *
 * @example
 * ```ts
 * const prepared = await preparer.prepare(params, {
 *   context: request,
 *   allow: (operation) =>
 *     operation.operation === 'mutation' ? codedError('METHOD_NOT_ALLOWED', 'Mutations are sent with POST.') : undefined,
 * })
 * ```
 */
export interface PrepareOptions {
  /**
   * The `context` cost estimators (`guards.estimators`, graphql-query-complexity's interface)
   * receive. The HTTP handler and server-sent events pass the Fetch `Request` (the GraphQL
   * context is built only once an operation is admitted, from its cost); the WebSocket server
   * passes the operation's GraphQL context value.
   */
  readonly context?: unknown
  /**
   * Refuses an operation its transport does not serve (a mutation over GET, a type a WebSocket
   * server is not given): called once the operation is selected, before its variables are
   * coerced and its cost computed, so that such a request is refused for what it is.
   */
  readonly allow?: (operation: OperationDefinitionNode) => GraphQLError | undefined
}

/**
 * Prepares operations; made by {@link createOperationPreparer}.
 *
 * @example
 * ```ts
 * const prepared = await preparer.prepare({ query: '{ __typename }' })
 * if (Array.isArray(prepared)) console.log(prepared[0].extensions.code)
 * ```
 */
export interface OperationPreparer {
  /**
   * The prepared operation, or the coded errors that refuse it (never throws for any request).
   * A document an APQ request registers is stored only by {@link PreparedOperation.register}.
   */
  prepare(
    request: OperationRequest,
    options?: PrepareOptions,
  ): Promise<PreparedOperation | readonly GraphQLError[]>
}

/**
 * Options of {@link createOperationPreparer}.
 *
 * @example
 * ```ts
 * const options: PreparerOptions = { schema, guards: { maxDepth: 12 }, introspection: false }
 * ```
 */
export interface PreparerOptions {
  readonly schema: GraphQLSchema
  /**
   * Limits and the cost model (defaults: `DEFAULT_GUARD_OPTIONS`). Cost estimators receive as
   * `context` the Fetch `Request` over HTTP and server-sent events, and the GraphQL context
   * value over WebSocket ({@link PrepareOptions.context}).
   */
  readonly guards?: GuardOptions
  /** Answer `__schema` and `__type` (default true); off, they are refused with `INTROSPECTION_DISABLED`. */
  readonly introspection?: boolean
  /** Remove "Did you mean …?" from validation and variable errors (default: `!introspection`). */
  readonly maskSuggestions?: boolean
  /**
   * Persisted documents (default: APQ over a `MemoryPersistedDocumentStore`). `mode:
   * 'allow-list'` runs only documents in the store (load a manifest with
   * `loadPersistedManifest`); `false` refuses hashes and ids with `PERSISTED_QUERY_NOT_SUPPORTED`.
   * An APQ miss (`PERSISTED_QUERY_NOT_FOUND`) is answered by the HTTP handler with 200 under
   * `Accept: application/json` (as Apollo Server) and 404 under
   * `application/graphql-response+json` (GraphQL-over-HTTP §5.4.2 requires a 4xx for a response
   * without `data`); Apollo Client retries with the query on either. A document sent with its
   * hash is stored only once its operation is admitted ({@link PreparedOperation.register}).
   */
  readonly persistedQueries?:
    | false
    | { readonly store?: PersistedDocumentStore; readonly mode?: 'apq' | 'allow-list' }
  /** Parsed and validated documents kept, least recently used evicted (default 1,000). */
  readonly maxDocuments?: number
  /** Told about failures the client does not see (a persisted store that fails to store). */
  readonly onError?: (error: unknown) => void
}

/**
 * How deep `variables` and `extensions` may nest, in objects and arrays (`{ "a": [1] }` is 2
 * levels deep). graphql-js coerces variables recursively, so a value thousands of levels deep
 * (a recursive input type: `input Filter { and: [Filter!] }`) would overflow the stack; 64
 * levels is far more than any real filter tree.
 */
const MAX_INPUT_DEPTH = 64

/**
 * Whether `value` nests deeper than `limit`, walked without recursion (which could itself
 * overflow the stack). Each object is walked once: JSON has no shared references, and a cycle
 * given through the API does not loop.
 */
function nestsDeeper(value: unknown, limit: number): boolean {
  const seen = new WeakSet<object>()
  const stack: [unknown, number][] = [[value, 0]]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [current, depth] = top
    if (typeof current !== 'object' || current === null || seen.has(current)) continue
    if (depth >= limit) return true
    seen.add(current)
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/** Apollo's message for an unknown operation name; graphql-js's for several unnamed ones. */
function selectOperation(
  document: DocumentNode,
  operationName: string | undefined,
): OperationDefinitionNode | GraphQLError {
  let found: OperationDefinitionNode | undefined
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue
    if (operationName === undefined) {
      if (found !== undefined) {
        return codedError(
          'OPERATION_NOT_FOUND',
          'Must provide operation name if query contains multiple operations.',
        )
      }
      found = definition
    } else if (definition.name?.value === operationName) {
      return definition
    }
  }
  if (found !== undefined) return found
  return codedError(
    'OPERATION_NOT_FOUND',
    operationName === undefined
      ? 'The document contains no operation.'
      : `Unknown operation named "${operationName}".`,
  )
}

/**
 * The request's shape (GraphQL-over-HTTP §4.1 "Request Parameters" and §4.4.1 "JSON
 * Encoding"): each member's type; `null` is absent, and so is an empty `operationName` (§4.3).
 */
function checkShape(request: OperationRequest):
  | {
      query?: string
      documentId?: string
      operationName?: string
      variables: Readonly<Record<string, unknown>>
      extensions?: Readonly<Record<string, unknown>>
    }
  | GraphQLError {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return codedError('BAD_REQUEST', 'A GraphQL request is a JSON object.')
  }
  const { query, variables, operationName, extensions, documentId } = request
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
  if (query != null && typeof query !== 'string') {
    return codedError('BAD_REQUEST', 'query must be a string.')
  }
  if (documentId != null && typeof documentId !== 'string') {
    return codedError('BAD_REQUEST', 'documentId must be a string.')
  }
  if (operationName != null && typeof operationName !== 'string') {
    return codedError('BAD_REQUEST', 'operationName must be a string.')
  }
  // graphql-js asserts on non-object variables (`variables: []` crashed a naive server).
  if (variables != null && !isObject(variables)) {
    return codedError('BAD_REQUEST', 'variables must be an object.')
  }
  if (extensions != null && !isObject(extensions)) {
    return codedError('BAD_REQUEST', 'extensions must be an object.')
  }
  for (const [name, value] of [
    ['variables', variables],
    ['extensions', extensions],
  ] as const) {
    if (nestsDeeper(value, MAX_INPUT_DEPTH)) {
      return codedError('BAD_REQUEST', `${name} nest deeper than ${MAX_INPUT_DEPTH} levels.`, {
        limit: MAX_INPUT_DEPTH,
      })
    }
  }
  return {
    // An empty query is no query: clients whose types require a string (graphql-sse's) send
    // '' with a persisted document's hash or id.
    ...(query != null && query !== '' ? { query } : {}),
    ...(documentId != null ? { documentId } : {}),
    ...(operationName != null && operationName !== '' ? { operationName } : {}),
    variables: variables ?? {},
    ...(extensions != null ? { extensions } : {}),
  }
}

/**
 * Makes the preparer: shape check, persisted document, document cache (parse, the guard pass's
 * static limits, graphql-js validation: once per document), operation selection, variables,
 * cost. The guards run before `validate`, which is super-linear on hostile documents.
 *
 * @example
 * ```ts
 * const preparer = createOperationPreparer({ schema, guards: { maxCost: 5000 } })
 * const prepared = await preparer.prepare({ query: '{ __typename }' })
 * ```
 */
export function createOperationPreparer(options: PreparerOptions): OperationPreparer {
  const { schema, guards = {}, introspection = true, maxDocuments = 1000, onError } = options
  const maskSuggestions = options.maskSuggestions ?? !introspection
  const maxCost = guards.maxCost ?? DEFAULT_GUARD_OPTIONS.maxCost
  const persisted: PersistedConfig | false =
    options.persistedQueries === false
      ? false
      : {
          store: options.persistedQueries?.store ?? new MemoryPersistedDocumentStore(),
          mode: options.persistedQueries?.mode ?? 'apq',
        }
  const lookup = createDocumentCache({
    schema,
    guards,
    introspection,
    maskSuggestions,
    maxDocuments,
  })

  return {
    async prepare(request, { context, allow } = {}) {
      const shape = checkShape(request)
      if (shape instanceof GraphQLError) return [shape]
      let resolved: Awaited<ReturnType<typeof resolveDocument>>
      try {
        resolved = await resolveDocument(shape, persisted)
      } catch (error) {
        onError?.(error)
        return [codedError('INTERNAL_SERVER_ERROR', 'The persisted document store failed.')]
      }
      if (resolved instanceof GraphQLError) return [resolved]
      const { document, analysis, errors } = lookup(resolved.source)
      if (errors.length > 0 || document === undefined || analysis === undefined) return errors
      const operation = selectOperation(document, shape.operationName)
      if (operation instanceof GraphQLError) return [operation]
      const refused = allow?.(operation)
      if (refused !== undefined) return [refused]
      const coerced = coerceVariables(schema, operation, shape.variables, maskSuggestions, onError)
      if (Array.isArray(coerced)) return coerced
      const { cost, errors: costErrors } = analysis.cost(
        operation,
        coerced as Readonly<Record<string, unknown>>,
        context,
      )
      if (costErrors.length > 0) return costErrors
      const registration = resolved.register
      return {
        document,
        operation,
        variableValues: shape.variables,
        cost,
        maxCost,
        async register() {
          if (registration === undefined || persisted === false) return
          // Valid and admitted, so it may be stored; a store failure must not fail the request.
          try {
            await persisted.store.set(registration.id, registration.source)
          } catch (error) {
            onError?.(error)
          }
        },
      }
    },
  }
}

/**
 * What coercion threw, if `error` carries it: graphql 16 returns it as is, graphql 17 wraps it
 * (`ensureGraphQLError`: no nodes, the thrown value as `originalError`). An error about the
 * input has the variable's node, and a `GraphQLError` (or none) as its cause.
 */
function thrownBy(error: unknown): unknown {
  if (!(error instanceof GraphQLError)) return error
  const cause = error.originalError
  if (error.nodes !== undefined || cause == null || cause instanceof GraphQLError) return undefined
  return cause
}

/**
 * graphql-js `getVariableValues`, on graphql 16 (`{ coerced }`) and 17 (`{ variableValues:
 * { coerced } }`); errors coded `BAD_USER_INPUT`. graphql-js returns what coercion threw
 * among its errors, uncoded (a stack overflow, a value whose getter throws): that is no fault
 * of the input the client can fix, so it is a masked `INTERNAL_SERVER_ERROR`, told to `onError`.
 */
function coerceVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  inputs: Readonly<Record<string, unknown>>,
  maskSuggestions: boolean,
  onError: ((error: unknown) => void) | undefined,
): Readonly<Record<string, unknown>> | readonly GraphQLError[] {
  let result: {
    errors?: readonly unknown[]
    coerced?: Record<string, unknown>
    variableValues?: { coerced: Record<string, unknown> }
  }
  try {
    result = getVariableValues(schema, operation.variableDefinitions ?? [], inputs, {
      maxErrors: 50,
      hideSuggestions: maskSuggestions,
    }) as typeof result
  } catch (error) {
    result = { errors: [error] }
  }
  if (result.errors !== undefined) {
    const thrown = result.errors.map(thrownBy).find((error) => error !== undefined)
    if (thrown !== undefined) {
      onError?.(thrown)
      return [codedError('INTERNAL_SERVER_ERROR', 'Internal server error.')]
    }
    return (result.errors as readonly GraphQLError[]).map((error) =>
      recode(error, 'BAD_USER_INPUT', maskSuggestions),
    )
  }
  return result.coerced ?? result.variableValues?.coerced ?? {}
}
