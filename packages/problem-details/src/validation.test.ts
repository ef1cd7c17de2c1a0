import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { problems } from './catalog.ts'
import { ProblemError } from './error.ts'
import type { StandardSchemaV1 } from './standard-schema.ts'
import {
  issuesToPointers,
  MAX_VALIDATION_ERRORS,
  validateOrThrow,
  validationProblem,
} from './validation.ts'

const Profile = z.object({
  age: z.number().int().positive(),
  profile: z.object({ color: z.enum(['green', 'red']) }),
})

async function issuesOf(schema: StandardSchemaV1, value: unknown) {
  const result = await schema['~standard'].validate(value)
  if (!result.issues) throw new Error('expected issues')
  return result.issues
}

describe('issuesToPointers', () => {
  test('zod issues: one entry per issue, pointing at the member', async () => {
    const pointers = issuesToPointers(
      await issuesOf(Profile, { age: -1, profile: { color: 'blue' } }),
    )
    expect(pointers.map((p) => p.pointer)).toEqual(['/age', '/profile/color'])
    for (const p of pointers) expect(p.detail.length).toBeGreaterThan(0)
  })

  test('path segments may be { key } objects; no path points at the whole body', () => {
    expect(
      issuesToPointers([
        { message: 'a', path: [{ key: 'items' }, { key: 0 }, 'a/b'] },
        { message: 'b' },
        { message: 'c', path: [Symbol('s~')] },
      ]),
    ).toEqual([
      { detail: 'a', pointer: '/items/0/a~1b' },
      { detail: 'b', pointer: '' },
      { detail: 'c', pointer: '/s~0' },
    ])
  })

  test('cuts a message that quotes the request at 256 characters (zod lists unknown keys)', async () => {
    const key = 'k'.repeat(3000)
    const [entry] = issuesToPointers(await issuesOf(z.strictObject({}), { [key]: 1 }))
    expect(entry!.detail).toHaveLength(256)
    expect(entry!.detail.startsWith('Unrecognized key')).toBe(true)
    expect(entry!.detail.endsWith('…')).toBe(true)
    expect(issuesToPointers([{ message: 'm'.repeat(256) }])[0]!.detail).toBe('m'.repeat(256))
  })

  test('caps the number of entries: at most 100, or the limit given', async () => {
    const issues = await issuesOf(
      z.array(z.number()),
      Array.from({ length: 500 }, () => 'x'),
    )
    expect(issues).toHaveLength(500)
    expect(issuesToPointers(issues)).toHaveLength(MAX_VALIDATION_ERRORS)
    expect(MAX_VALIDATION_ERRORS).toBe(100)
    expect(issuesToPointers(issues, 10)).toHaveLength(10)
    expect(issuesToPointers(issues, 1000)).toHaveLength(100)
  })
})

describe('issuesToPointers: the cut never splits a character', () => {
  const wellFormed = (text: string) =>
    !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

  test('MUST NOT leave a lone surrogate where an emoji straddles the cut', () => {
    const message = `${'a'.repeat(254)}😀😀`
    const detail = issuesToPointers([{ message }])[0]!.detail
    expect(detail).toBe(`${'a'.repeat(254)}…`)
    expect(wellFormed(detail)).toBe(true)
  })

  test('property: any well-formed message gives a well-formed prefix of it, at most 256 units', () => {
    fc.assert(
      // Astral characters (two UTF-16 units each) among others, so cuts often fall on a pair.
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'é', '😀', '𝄞'), minLength: 150, maxLength: 300 }),
        (message) => {
          const detail = issuesToPointers([{ message }])[0]!.detail
          expect(detail.length).toBeLessThanOrEqual(256)
          expect(wellFormed(detail)).toBe(true)
          const kept = detail.endsWith('…') && detail !== message ? detail.slice(0, -1) : detail
          expect(message.startsWith(kept)).toBe(true)
        },
      ),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})

describe('validationProblem', () => {
  test('is the catalog 422, valid by its own schema', async () => {
    const problem = validationProblem(await issuesOf(Profile, {}))
    expect(problem).toMatchObject({ type: 'validation-failed', status: 422 })
    expect(problem.errors.map((e) => e.pointer)).toEqual(['/age', '/profile'])
    expect(problem.detail).toBe('2 member(s) of the body are not valid.')
    expect(problems.validation.is({ ...problem })).toBe(true)
  })
})

describe('validateOrThrow', () => {
  test('resolves the output of a valid value', async () => {
    const Trimmed = z.object({ name: z.string().trim() })
    await expect(validateOrThrow(Trimmed, { name: ' a ' })).resolves.toEqual({ name: 'a' })
  })

  test('rejects an invalid value with the 422 ProblemError', async () => {
    const error = await validateOrThrow(Profile, { age: 'x' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProblemError)
    expect((error as ProblemError).status).toBe(422)
    expect((error as ProblemError).code).toBe('VALIDATION_FAILED')
  })

  test('takes asynchronous schemas too', async () => {
    const Positive = z.number().refine(async (n) => n > 0)
    await expect(validateOrThrow(Positive, 2)).resolves.toBe(2)
    await expect(validateOrThrow(Positive, -2)).rejects.toBeInstanceOf(ProblemError)
  })

  test('an error the schema throws propagates as it is', async () => {
    const broken: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => {
          throw new RangeError('Maximum call stack size exceeded')
        },
      },
    }
    await expect(validateOrThrow(broken, 1)).rejects.toBeInstanceOf(RangeError)
  })
})
