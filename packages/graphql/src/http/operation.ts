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
   * `context` is handed to cost estimators.
   */
  prepare(
    request: OperationRequest,
    context?: unknown,
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
  /** Limits and the cost model (defaults: `DEFAULT_GUARD_OPTIONS`). */
  readonly guards?: GuardOptions
  /** Answer `__schema` and `__type` (default true); off, they are refused with `INTROSPECTION_DISABLED`. */
  readonly introspection?: boolean
  /** Remove "Did you mean …?" from validation and variable errors (default: `!introspection`). */
  readonly maskSuggestions?: boolean
  /**
   * Persisted documents (default: APQ over a `MemoryPersistedDocumentStore`). `mode:
   * 'allow-list'` runs only documents in the store (load a manifest with
   * `loadPersistedManifest`); `false` refuses hashes and ids with `PERSISTED_QUERY_NOT_SUPPORTED`.
   */
  readonly persistedQueries?:
    | false
    | { readonly store?: PersistedDocumentStore; readonly mode?: 'apq' | 'allow-list' }
  /** Parsed and validated documents kept, least recently used evicted (default 1,000). */
  readonly maxDocuments?: number
  /** Told about failures the client does not see (a persisted store that fails to store). */
  readonly onError?: (error: unknown) => void
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
    async prepare(request, context) {
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
      if (resolved.register !== undefined && persisted !== false) {
        // Valid, so it may be registered; a store failure must not fail the request.
        try {
          await persisted.store.set(resolved.register.id, resolved.register.source)
        } catch (error) {
          onError?.(error)
        }
      }
      const coerced = coerceVariables(schema, operation, shape.variables, maskSuggestions)
      if (Array.isArray(coerced)) return coerced
      const { cost, errors: costErrors } = analysis.cost(
        operation,
        coerced as Readonly<Record<string, unknown>>,
        context,
      )
      if (costErrors.length > 0) return costErrors
      return { document, operation, variableValues: shape.variables, cost }
    },
  }
}

/**
 * graphql-js `getVariableValues`, on graphql 16 (`{ coerced }`) and 17 (`{ variableValues:
 * { coerced } }`); errors coded `BAD_USER_INPUT`.
 */
function coerceVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  inputs: Readonly<Record<string, unknown>>,
  maskSuggestions: boolean,
): Readonly<Record<string, unknown>> | readonly GraphQLError[] {
  const result = getVariableValues(schema, operation.variableDefinitions ?? [], inputs, {
    maxErrors: 50,
    hideSuggestions: maskSuggestions,
  }) as {
    errors?: readonly GraphQLError[]
    coerced?: Record<string, unknown>
    variableValues?: { coerced: Record<string, unknown> }
  }
  if (result.errors !== undefined) {
    return result.errors.map((error) => recode(error, 'BAD_USER_INPUT', maskSuggestions))
  }
  return result.coerced ?? result.variableValues?.coerced ?? {}
}
