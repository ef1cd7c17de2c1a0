/**
 * Problem types: `defineProblem()` turns one declaration (type, title, status, a Standard
 * Schema for the extension members) into a typed constructor, a throwable error and a
 * client-side type guard.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3
 * @module
 */
import type { ProblemDetails } from '@api-blocks/core'
import { isAbsoluteType, problemCode } from './code.ts'
import type { ProblemErrorOptions } from './error.ts'
import { ProblemError } from './error.ts'
import { attachTitles } from './internal/titles.ts'
import type { StandardSchemaV1 } from './standard-schema.ts'

/**
 * The members RFC 9457 §3.1 defines; every other member is an extension.
 *
 * @example
 * ```ts
 * STANDARD_MEMBERS.includes('detail') // true: not an extension
 * ```
 */
export const STANDARD_MEMBERS: readonly string[] = ['type', 'title', 'status', 'detail', 'instance']

// RFC 9457 §3.2: extension names SHOULD start with a letter, hold only ALPHA, DIGIT and "_",
// and be at least three characters long, so that formats other than JSON can carry them.
const EXTENSION_NAME = /^[A-Za-z][A-Za-z0-9_]{2,}$/

/**
 * Whether `name` follows the naming rule of RFC 9457 §3.2 for extension members.
 *
 * @example
 * ```ts
 * isConformingExtensionName('balance') // true
 * isConformingExtensionName('invalid-params') // false: the hyphen (RFC 7807 erratum 6178)
 * ```
 */
export function isConformingExtensionName(name: string): boolean {
  return EXTENSION_NAME.test(name)
}

/**
 * The members a caller supplies for one occurrence of a problem.
 *
 * @example
 * ```ts
 * const occurrence: ProblemOccurrence = { detail: 'No order 42', instance: '/v1/orders/42' }
 * ```
 */
export interface ProblemOccurrence {
  /** Explanation of this occurrence, for a human. Never put secrets in it. */
  detail?: string
  /** A URI reference for this occurrence; defaults to the request path when serialised. */
  instance?: string
  /**
   * Overrides the type's status for this occurrence (for example an `ietf` profile that
   * answers 422 where the default answers 409). The body's `status` always equals the
   * HTTP status.
   */
  status?: number
}

/**
 * What `create()` takes: the occurrence members plus the typed extensions.
 *
 * @example
 * ```ts
 * const init: ProblemInit<{ balance: number }> = { detail: 'Balance is 30.', balance: 30 }
 * ```
 */
export type ProblemInit<Ext> = ProblemOccurrence & Ext

/**
 * A problem of one known type, with its typed extension members.
 *
 * @example
 * ```ts
 * const problem: Problem<{ balance: number }> = outOfCredit.create({ balance: 30 })
 * ```
 */
export type Problem<Ext = Record<never, never>> = ProblemDetails & Ext

/**
 * A schema for the extension members of a problem type: any Standard Schema
 * (https://standardschema.dev) of an object, such as zod's `z.object({ … })`.
 *
 * @example
 * ```ts
 * const schema: ExtensionsSchema = z.object({ balance: z.number() })
 * ```
 */
export type ExtensionsSchema = StandardSchemaV1<object, object>

/**
 * The declaration `defineProblem()` takes.
 *
 * @example
 * ```ts
 * const definition: ProblemTypeDefinition = { type: 'gone', title: 'Gone.', status: 410 }
 * ```
 */
export interface ProblemTypeDefinition<Schema extends ExtensionsSchema | undefined = undefined> {
  /** An absolute URI, or a slug such as `not-found` resolved against the catalog base. */
  type: string
  /** A short summary that does not change from occurrence to occurrence. */
  title: string
  /** The HTTP status code this problem is usually answered with. */
  status: number
  /**
   * A Standard Schema for the extension members: an object schema of any library (zod's
   * `z.object`), or one written by hand. `is()` validates with it; it must validate
   * synchronously (see {@link defineProblem}).
   */
  extensions?: Schema
  /** Translations of `title`, keyed by language tag (e.g. `de`, `fr-CA`). */
  titles?: Readonly<Record<string, string>>
  /**
   * Extension names that break the RFC 9457 §3.2 naming rule but are required by a
   * registration (e.g. `violated-policies` of the IANA `quota-exceeded` type).
   */
  allowNames?: readonly string[]
}

/**
 * The extension members `create()` takes for a schema: its input type.
 *
 * @example
 * ```ts
 * type Ext = ExtensionsOf<typeof schema> // { balance: number }
 * ```
 */
export type ExtensionsOf<Schema> = Schema extends StandardSchemaV1
  ? StandardSchemaV1.InferInput<Schema>
  : Record<never, never>

/**
 * The extension members `is()` vouches for, for a schema: its output type.
 *
 * @example
 * ```ts
 * type Parsed = ParsedExtensionsOf<typeof schema> // { balance: number }
 * ```
 */
export type ParsedExtensionsOf<Schema> = Schema extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<Schema>
  : Record<never, never>

/**
 * What a caller may pass to `create()`: optional when the type has no required extension
 * member.
 *
 * @example
 * ```ts
 * const args: CreateArgs<{ balance: number }> = [{ balance: 30 }]
 * ```
 */
export type CreateArgs<Ext> =
  Record<never, never> extends Ext ? [init?: ProblemInit<Ext>] : [init: ProblemInit<Ext>]

/**
 * One problem type of a catalog, made by {@link defineProblem}.
 *
 * @example
 * ```ts
 * const gone: ProblemType = defineProblem({ type: 'gone', title: 'Gone.', status: 410 })
 * ```
 */
export interface ProblemType<Ext = Record<never, never>, ParsedExt = Ext> {
  /** The `type` member: a slug resolved against the catalog base, or an absolute URI. */
  readonly type: string
  readonly title: string
  readonly status: number
  readonly titles: Readonly<Record<string, string>>
  /**
   * The stable machine code of the type, UPPER_SNAKE_CASE: `NOT_FOUND` for `not-found` (see
   * {@link problemCode}).
   */
  readonly code: string
  /** Makes one occurrence of the problem, as a plain JSON-ready object. */
  create(...args: CreateArgs<Ext>): Problem<Ext>
  /** Makes a throwable {@link ProblemError} carrying one occurrence. */
  error(...args: [...CreateArgs<Ext>, options?: ProblemErrorOptions]): ProblemError<Ext>
  /**
   * Client-side type guard: whether a parsed problem is of this type (its `type` equals this
   * type's URI resolved against `base`) and its extension members match the schema. The
   * schema sees the whole problem object, standard members included, so it must let members
   * it does not name be (zod's `z.object` does, `z.strictObject` does not). Throws a
   * TypeError when the schema's validation answers a Promise (see {@link defineProblem}).
   */
  is(value: unknown, options?: { base?: string }): value is Problem<ParsedExt>
}

/**
 * Where `defineProblem()` resolves slugs when no base is given at serialisation time.
 *
 * @example
 * ```ts
 * resolveProblemType('not-found') === `${DEFAULT_PROBLEM_BASE}not-found` // true
 * ```
 */
export const DEFAULT_PROBLEM_BASE = 'tag:api-blocks.dev,2026:problems/'

/**
 * Resolves a problem `type` against a base: absolute URIs (anything with a scheme) are kept,
 * slugs are appended to the base. `about:blank` is absolute.
 *
 * @example
 * ```ts
 * resolveProblemType('not-found', 'https://example.com/problems/')
 * // 'https://example.com/problems/not-found'
 * ```
 */
export function resolveProblemType(type: string, base: string = DEFAULT_PROBLEM_BASE): string {
  return isAbsoluteType(type) ? type : base + type
}

/**
 * Declares a problem type. The result creates occurrences, throws them and recognises them.
 *
 * The extension members are described by any Standard Schema (https://standardschema.dev):
 * zod, valibot, ArkType, or one written by hand. Their types are inferred from it: `create()`
 * and `error()` take its input type, and `is()` narrows to its output type.
 *
 * Extension names are checked against RFC 9457 §3.2 (a letter, then letters, digits or `_`,
 * three characters at least; no standard member name): when the type is defined for a schema
 * that exposes its members as `shape` (zod's object schemas, and the catalog's own), otherwise
 * when an occurrence is created, for the members that occurrence carries. A name that breaks
 * the rule is a TypeError, unless `allowNames` lists it.
 *
 * `is()` validates synchronously, with the schema's `~standard.validate`. A schema whose
 * validation answers a Promise (an asynchronous refinement) cannot serve a type guard: the
 * `is()` call that gets the Promise throws a TypeError, so the mistake shows at first use,
 * not at definition (no value is validated before). zod also answers a Promise when its
 * synchronous parse throws, as on input nested too deeply for the stack.
 *
 * @example
 * ```ts
 * import { z } from 'zod'
 * const outOfCredit = defineProblem({
 *   type: 'out-of-credit',
 *   title: 'You do not have enough credit.',
 *   status: 403,
 *   extensions: z.object({ balance: z.number(), accounts: z.array(z.string()) }),
 * })
 * throw outOfCredit.error({ detail: 'Balance is 30, cost is 50.', balance: 30, accounts: ['/a/1'] })
 * ```
 */
export function defineProblem<const Schema extends ExtensionsSchema | undefined = undefined>(
  definition: ProblemTypeDefinition<Schema>,
): ProblemType<ExtensionsOf<Schema>, ParsedExtensionsOf<Schema>> {
  type Ext = ExtensionsOf<Schema>
  const { type, title, status, extensions: schema, allowNames = [] } = definition
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new RangeError(`Problem status must be an error status (400-599), got ${status}`)
  }
  const checkName = (name: string): void => {
    if (STANDARD_MEMBERS.includes(name)) {
      throw new TypeError(`Extension member "${name}" would shadow a standard member`)
    }
    if (!isConformingExtensionName(name) && !allowNames.includes(name)) {
      throw new TypeError(
        `Extension member "${name}" breaks the RFC 9457 §3.2 naming rule (a letter, then letters, digits or "_", three characters at least)`,
      )
    }
  }
  const shape = (schema as { shape?: unknown } | undefined)?.shape
  const namesKnown = schema === undefined || (typeof shape === 'object' && shape !== null)
  if (typeof shape === 'object' && shape !== null)
    for (const name of Object.keys(shape)) checkName(name)
  const code = problemCode(type)
  const titles = Object.freeze({ ...definition.titles })

  const create = (init?: ProblemInit<Ext>): Problem<Ext> => {
    const { detail, instance, status: statusOverride, ...rest } = (init ?? {}) as ProblemOccurrence
    // The schema did not say which members it has: check the names this occurrence carries.
    if (!namesKnown) for (const name of Object.keys(rest)) checkName(name)
    const problem: ProblemDetails = { type, title, status: statusOverride ?? status }
    if (detail !== undefined) problem.detail = detail
    if (instance !== undefined) problem.instance = instance
    Object.assign(problem, rest)
    return attachTitles(problem, titles) as Problem<Ext>
  }

  return Object.freeze({
    type,
    title,
    status,
    code,
    titles,
    create: create as ProblemType<Ext>['create'],
    error: ((...args: unknown[]) => {
      const [init, options] = args as [
        ProblemInit<Ext> | undefined,
        ProblemErrorOptions | undefined,
      ]
      return new ProblemError(create(init), options)
    }) as ProblemType<Ext>['error'],
    is(value: unknown, options?: { base?: string }): value is Problem<ParsedExtensionsOf<Schema>> {
      if (typeof value !== 'object' || value === null) return false
      const candidate = value as Partial<ProblemDetails>
      if (typeof candidate.type !== 'string') return false
      if (
        candidate.type !== type &&
        candidate.type !== resolveProblemType(type, options?.base ?? DEFAULT_PROBLEM_BASE)
      ) {
        return false
      }
      return schema === undefined || isValid(schema, value, type)
    },
  })
}

/** Synchronous Standard Schema validation, for a type guard. */
function isValid(schema: StandardSchemaV1, value: unknown, type: string): boolean {
  const result = schema['~standard'].validate(value)
  if (result instanceof Promise) {
    result.catch(() => undefined)
    throw new TypeError(
      `The extensions schema of problem type "${type}" validated asynchronously; is() needs a schema that validates synchronously`,
    )
  }
  return !result.issues
}
