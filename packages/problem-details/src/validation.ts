/**
 * Validation adapters: the `@api-blocks/problem-details/validation` entry point. It turns the
 * issues of any Standard Schema (https://standardschema.dev: zod, valibot, ArkType, or one of
 * your own) into the catalog's 422 `validation` problem, whose `errors` member points at each
 * offending part of the body with a JSON Pointer (RFC 6901). The main entry point does not
 * import this one, so an application that does not validate bundles none of it.
 *
 * @example
 * ```ts
 * import { validateOrThrow } from '@api-blocks/problem-details/validation'
 * import { z } from 'zod'
 *
 * const order = await validateOrThrow(z.object({ sku: z.string() }), await request.json())
 * ```
 *
 * @module
 */
import { problems } from './catalog.ts'
import { ProblemError } from './error.ts'
import { MAX_POINTERS } from './internal/members.ts'
import type { ProblemPointer } from './pointer.ts'
import { toJsonPointer } from './pointer.ts'
import type { Problem } from './problem.ts'
import type { StandardSchemaV1 } from './standard-schema.ts'

/**
 * The most `errors` entries {@link issuesToPointers} makes by default: 100.
 *
 * @example
 * ```ts
 * issuesToPointers(issues).length <= MAX_VALIDATION_ERRORS // true
 * ```
 */
export const MAX_VALIDATION_ERRORS: number = MAX_POINTERS

/**
 * Turns the issues of a failed Standard Schema validation into `errors` entries with JSON
 * Pointers, at most `limit` of them (default and most {@link MAX_VALIDATION_ERRORS}, what the
 * catalog's `validation` problem holds), each message cut at 256 characters, so that one huge
 * invalid body cannot make a huge answer. A path segment may be a key or a `{ key }` object,
 * as the spec allows; an issue without a path points at the whole body (`''`).
 *
 * @example
 * ```ts
 * const result = await schema['~standard'].validate(body)
 * if (result.issues) console.log(issuesToPointers(result.issues)) // [{ detail: '…', pointer: '/sku' }]
 * ```
 */
export function issuesToPointers(
  issues: readonly StandardSchemaV1.Issue[],
  limit: number = MAX_VALIDATION_ERRORS,
): ProblemPointer[] {
  const count = Math.min(issues.length, Math.max(0, Math.min(limit, MAX_VALIDATION_ERRORS)))
  const pointers: ProblemPointer[] = []
  for (let index = 0; index < count; index += 1) {
    const issue = issues[index] as StandardSchemaV1.Issue
    const path = (issue.path ?? []).map((segment) =>
      typeof segment === 'object' && segment !== null ? segment.key : segment,
    )
    pointers.push({ detail: bounded(issue.message), pointer: toJsonPointer(path) })
  }
  return pointers
}

// The longest issue message kept in an `errors` entry. Messages can quote the request (zod's
// "Unrecognized keys" lists the body's unknown member names, whatever their length): past
// this they are cut, so the answer never echoes more than this of the body per entry.
const MAX_ISSUE_DETAIL_LENGTH = 256

function bounded(message: string): string {
  if (message.length <= MAX_ISSUE_DETAIL_LENGTH) return message
  let end = MAX_ISSUE_DETAIL_LENGTH - 1
  // The cut is in UTF-16 code units: it never keeps the high half of a surrogate pair without
  // its low half, a lone surrogate that no UTF-8 encoder can write (RFC 8259 §8.1).
  const last = message.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${message.slice(0, end)}…`
}

/**
 * The catalog's 422 `validation` problem for the issues of a failed validation: `errors`
 * from {@link issuesToPointers}, and a `detail` that counts the issues.
 *
 * @example
 * ```ts
 * const result = schema['~standard'].validate(body)
 * if (!(result instanceof Promise) && result.issues) {
 *   return toProblemResponse(validationProblem(result.issues), { request })
 * }
 * ```
 */
export function validationProblem(
  issues: readonly StandardSchemaV1.Issue[],
): Problem<{ errors: ProblemPointer[] }> {
  return problems.validation.create({
    errors: issuesToPointers(issues),
    detail: `${issues.length} member(s) of the body are not valid.`,
  })
}

/**
 * Validates `value` with any Standard Schema (synchronous or asynchronous) and resolves its
 * output; when the schema finds issues, rejects with the `ProblemError` of
 * {@link validationProblem} (422, code `VALIDATION_FAILED`). Errors the schema itself throws
 * (a RangeError from a recursive schema on hostile nesting, say) propagate as they are.
 *
 * @example
 * ```ts
 * const Order = z.object({ sku: z.string(), quantity: z.number().int().positive() })
 * const order = await validateOrThrow(Order, JSON.parse(text)) // { sku: string; quantity: number }
 * ```
 */
export async function validateOrThrow<Schema extends StandardSchemaV1>(
  schema: Schema,
  value: unknown,
): Promise<StandardSchemaV1.InferOutput<Schema>> {
  const result = await schema['~standard'].validate(value)
  if (result.issues) throw new ProblemError(validationProblem(result.issues))
  return result.value as StandardSchemaV1.InferOutput<Schema>
}
