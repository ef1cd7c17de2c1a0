/**
 * RFC 9457 problem details for HTTP APIs: declare typed problem types, answer them as
 * `application/problem+json` Responses, and parse them as a client. Extension members are
 * described by any Standard Schema (zod, valibot, ArkType, or one written by hand); no schema
 * library is needed to use the catalog. Turning a schema's issues into the 422 `validation`
 * problem is in `@api-blocks/problem-details/validation`.
 *
 * @example
 * ```ts
 * import { problems, toProblemResponse } from '@api-blocks/problem-details'
 * const response = toProblemResponse(problems.notFound.create({ detail: 'No order 42' }), { request })
 * ```
 *
 * @module
 */

export type { ProblemDetails, ProblemSource } from '@api-blocks/core'
export { isProblemSource } from '@api-blocks/core'
export type { ProblemCatalog } from './catalog.ts'
export { problems } from './catalog.ts'
export { problemCode } from './code.ts'
export type { ProblemErrorOptions } from './error.ts'
export { ProblemError } from './error.ts'
export type { LanguageRange } from './language.ts'
export { MAX_ACCEPT_LANGUAGE_LENGTH, negotiateLanguage, parseAcceptLanguage } from './language.ts'
export type { ParsedProblem } from './parse.ts'
export { MAX_PROBLEM_BODY_BYTES, parseProblem, readProblem } from './parse.ts'
export type { ProblemPointer } from './pointer.ts'
export { toJsonPointer } from './pointer.ts'
export type {
  CreateArgs,
  ExtensionsOf,
  ExtensionsSchema,
  ParsedExtensionsOf,
  Problem,
  ProblemInit,
  ProblemOccurrence,
  ProblemType,
  ProblemTypeDefinition,
} from './problem.ts'
export {
  DEFAULT_PROBLEM_BASE,
  defineProblem,
  isConformingExtensionName,
  resolveProblemType,
  STANDARD_MEMBERS,
} from './problem.ts'
export type { ProblemResponseOptions } from './response.ts'
export {
  errorToProblemResponse,
  PROBLEM_MEDIA_TYPE,
  serializeProblem,
  toProblemResponse,
} from './response.ts'
export type { StandardSchemaV1, StandardTypedV1 } from './standard-schema.ts'
