import { describe, expectTypeOf, test } from 'vitest'
import { z } from 'zod'
import type { Problem, ProblemError, ProblemPointer, StandardSchemaV1 } from './index.ts'
import { defineProblem, problems } from './index.ts'
import { issuesToPointers, validateOrThrow, validationProblem } from './validation.ts'

describe('defineProblem infers the extension members', () => {
  test('from a zod schema: create() takes the input type, is() narrows to the output type', () => {
    const counted = defineProblem({
      type: 'counted',
      title: 'Counted.',
      status: 400,
      extensions: z.object({ count: z.string().transform(Number), tags: z.array(z.string()) }),
    })
    const problem = counted.create({ count: '3', tags: [] })
    expectTypeOf(problem.count).toEqualTypeOf<string>()
    // @ts-expect-error: the input type of count is string
    counted.create({ count: 3, tags: [] })
    // @ts-expect-error: tags is required
    counted.create({ count: '3' })
    const value: unknown = JSON.parse('{}')
    if (counted.is(value)) {
      expectTypeOf(value.count).toEqualTypeOf<number>()
      expectTypeOf(value.status).toEqualTypeOf<number>()
    }
    expectTypeOf(counted.error({ count: '1', tags: [] })).toEqualTypeOf<
      ProblemError<{ count: string; tags: string[] }>
    >()
  })

  test('from a hand-written Standard Schema', () => {
    const balance: StandardSchemaV1<{ balance: number }> = {
      '~standard': {
        version: 1,
        vendor: 'mine',
        validate: (value) => ({ value: value as { balance: number } }),
      },
    }
    const low = defineProblem({ type: 'low', title: 'Low.', status: 403, extensions: balance })
    expectTypeOf(low.create({ balance: 1 })).toEqualTypeOf<Problem<{ balance: number }>>()
    // @ts-expect-error: balance is a number
    low.create({ balance: '1' })
    const value: unknown = null
    if (low.is(value)) expectTypeOf(value.balance).toEqualTypeOf<number>()
  })

  test('a schema of something other than an object is refused', () => {
    const text: StandardSchemaV1<string> = {
      '~standard': { version: 1, vendor: 'mine', validate: (value) => ({ value: String(value) }) },
    }
    // @ts-expect-error: extension members are an object
    defineProblem({ type: 'x', title: 'X', status: 400, extensions: text })
  })
})

describe('create() argument optionality', () => {
  test('optional without extensions, or when every extension member is optional', () => {
    const gone = defineProblem({ type: 'gone', title: 'Gone.', status: 410 })
    gone.create()
    gone.error()
    gone.create({ detail: 'x', instance: '/a', status: 404 })
    // @ts-expect-error: an unknown member, without extensions
    gone.create({ balance: 1 })
    const hinted = defineProblem({
      type: 'hinted',
      title: 'Hinted.',
      status: 400,
      extensions: z.object({ hint: z.string().optional() }),
    })
    hinted.create()
    hinted.create({ hint: 'x' })
  })

  test('required when an extension member is', () => {
    // @ts-expect-error: max_bytes is required
    problems.payloadTooLarge.create()
    // @ts-expect-error: errors is required
    problems.validation.error({ detail: 'x' })
    expectTypeOf(
      problems.payloadTooLarge.create({ max_bytes: 1 }).max_bytes,
    ).toEqualTypeOf<number>()
    problems.notFound.create()
  })
})

describe('the validation entry point', () => {
  test('validateOrThrow resolves the output type of the schema', async () => {
    const Order = z.object({ quantity: z.string().transform(Number) })
    expectTypeOf(await validateOrThrow(Order, {})).toEqualTypeOf<{ quantity: number }>()
  })

  test('issues are Standard Schema issues; the problem is the catalog 422', () => {
    expectTypeOf(issuesToPointers([{ message: 'x' }])).toEqualTypeOf<ProblemPointer[]>()
    expectTypeOf(validationProblem([]).errors).toEqualTypeOf<ProblemPointer[]>()
    // @ts-expect-error: an issue has a message
    issuesToPointers([{ path: ['a'] }])
  })
})
