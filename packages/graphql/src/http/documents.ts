/**
 * The document cache of the operation preparer: what does not depend on a request's variables
 * (parsing, the guard pass's static limits, graphql-js validation) done once per document
 * source, in a bounded LRU.
 *
 * @module
 */
import type { DocumentNode, GraphQLSchema, ValidationRule } from 'graphql'
import {
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  validate,
} from 'graphql'
import { analyzeDocument, parseDocument } from '../guards/index.ts'
import type { DocumentAnalysis, GuardOptions } from '../guards/options.ts'
import { recode } from './recode.ts'

/**
 * The cache also holds at most this many characters of sources (4 Mi: a parsed document takes
 * some tens of times its source), whatever `maxDocuments` says.
 */
const MAX_CACHED_CHARS = 4 * 1024 * 1024

/**
 * What the cache keeps per document source. A document with `errors` never runs.
 *
 * @example
 * ```ts
 * const { document, analysis, errors } = lookup('{ __typename }')
 * ```
 */
export interface CachedDocument {
  readonly document?: DocumentNode
  readonly analysis?: DocumentAnalysis
  /** Parse errors, static guard errors or validation errors. */
  readonly errors: readonly GraphQLError[]
}

/**
 * Settings of {@link createDocumentCache}.
 *
 * @example
 * ```ts
 * const options: DocumentCacheOptions = { schema, guards: {}, introspection: true, maskSuggestions: false, maxDocuments: 1000 }
 * ```
 */
export interface DocumentCacheOptions {
  readonly schema: GraphQLSchema
  readonly guards: GuardOptions
  readonly introspection: boolean
  readonly maskSuggestions: boolean
  readonly maxDocuments: number
}

/**
 * A lookup from document source to its parsed, guarded and validated form. The guard pass runs
 * before `validate` (super-linear on hostile documents) and over every operation of the
 * document, since `validate` walks them all. Validation errors are coded
 * `GRAPHQL_VALIDATION_FAILED`, or `INTROSPECTION_DISABLED` for `__schema`/`__type` when
 * introspection is off.
 *
 * @example
 * ```ts
 * const lookup = createDocumentCache({ schema, guards: {}, introspection: false, maskSuggestions: true, maxDocuments: 1000 })
 * lookup('{ __schema { types { name } } }').errors[0]?.extensions.code // 'INTROSPECTION_DISABLED'
 * ```
 */
export function createDocumentCache(
  options: DocumentCacheOptions,
): (source: string) => CachedDocument {
  const { schema, guards, introspection, maskSuggestions, maxDocuments } = options
  const rules: readonly ValidationRule[] = introspection
    ? specifiedRules
    : [...specifiedRules, NoSchemaIntrospectionCustomRule]
  const cache = new Map<string, CachedDocument>()
  let cachedChars = 0

  const compile = (source: string): CachedDocument => {
    const parsed = parseDocument(
      source,
      guards.maxTokens === undefined ? {} : { maxTokens: guards.maxTokens },
    )
    if (parsed instanceof GraphQLError) return { errors: [parsed] }
    const analysis = analyzeDocument(schema, parsed, guards)
    const guardErrors: GraphQLError[] = []
    for (const definition of parsed.definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION) {
        guardErrors.push(...analysis.operation(definition).errors)
      }
    }
    if (guardErrors.length > 0) return { errors: guardErrors }
    // NoSchemaIntrospectionCustomRule reports every field of an introspection type (39 for the
    // standard introspection query): one INTROSPECTION_DISABLED, the first, says it all.
    let introspection = false
    const errors: GraphQLError[] = []
    for (const error of validate(schema, parsed, rules)) {
      // NoSchemaIntrospectionCustomRule's message; graphql-js gives its errors no code.
      if (error.message.startsWith('GraphQL introspection has been disabled')) {
        if (introspection) continue
        introspection = true
        errors.push(recode(error, 'INTROSPECTION_DISABLED', maskSuggestions))
      } else errors.push(recode(error, 'GRAPHQL_VALIDATION_FAILED', maskSuggestions))
    }
    return { document: parsed, analysis, errors }
  }

  return (source) => {
    const hit = cache.get(source)
    if (hit !== undefined) {
      // Least recently used first: a hit moves to the end.
      cache.delete(source)
      cache.set(source, hit)
      return hit
    }
    const compiled = compile(source)
    if (maxDocuments > 0 && source.length <= MAX_CACHED_CHARS) {
      cache.set(source, compiled)
      cachedChars += source.length
      for (const oldest of cache.keys()) {
        if (cache.size <= maxDocuments && cachedChars <= MAX_CACHED_CHARS) break
        cache.delete(oldest)
        cachedChars -= oldest.length
      }
    }
    return compiled
  }
}
