// Tiny Standard Schemas for the extension members of the default catalog, so that the catalog
// (and a worker that answers one of its problems) needs no schema library. Each schema checks
// only the members it names and exposes them as `shape`, as zod's object schemas do, so that
// `defineProblem()` checks their names when the type is defined.
import type { StandardSchemaV1 } from '../standard-schema.ts'

/** Checks one member: the issue's message, or `undefined` when the value is fine. */
export type MemberCheck = (value: unknown) => string | undefined

/** A schema of named members, with the checks by name. */
export type MembersSchema<T> = StandardSchemaV1<T> & {
  readonly shape: { readonly [K in keyof T]: MemberCheck }
}

/** A schema of an object whose named members pass their checks; other members are let be. */
export function members<T extends object>(
  shape: {
    readonly [K in keyof T]: MemberCheck
  },
): MembersSchema<T> {
  const checks = Object.entries(shape) as [string, MemberCheck][]
  return {
    shape,
    '~standard': {
      version: 1,
      vendor: 'api-blocks',
      validate(value) {
        if (typeof value !== 'object' || value === null) {
          return { issues: [{ message: 'Expected an object' }] }
        }
        const issues: StandardSchemaV1.Issue[] = []
        for (const [name, check] of checks) {
          const message = check(Object.hasOwn(value, name) ? Reflect.get(value, name) : undefined)
          if (message !== undefined) issues.push({ message, path: [name] })
        }
        return issues.length > 0 ? { issues } : { value: value as T }
      },
    },
  }
}

export const string: MemberCheck = (value) =>
  typeof value === 'string' ? undefined : 'Expected a string'

export const nonNegativeInteger: MemberCheck = (value) =>
  Number.isSafeInteger(value) && (value as number) >= 0
    ? undefined
    : 'Expected a non-negative integer'

export const strings: MemberCheck = (value) =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string')
    ? undefined
    : 'Expected an array of strings'

/** The most `errors` entries of one validation problem (a huge invalid body, a small answer). */
export const MAX_POINTERS = 100

export const pointers: MemberCheck = (value) =>
  Array.isArray(value) &&
  value.length <= MAX_POINTERS &&
  value.every(
    (entry) =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof entry.detail === 'string' &&
      typeof entry.pointer === 'string',
  )
    ? undefined
    : `Expected at most ${MAX_POINTERS} entries of { detail, pointer }`
