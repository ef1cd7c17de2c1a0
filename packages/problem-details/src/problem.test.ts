import { describe, expect, expectTypeOf, test } from 'vitest'
import { z } from 'zod'
import { ProblemError } from './error.ts'
import type { StandardSchemaV1 } from './index.ts'
import {
  DEFAULT_PROBLEM_BASE,
  defineProblem,
  isConformingExtensionName,
  resolveProblemType,
} from './problem.ts'

const outOfCredit = defineProblem({
  type: 'https://example.com/probs/out-of-credit',
  title: 'You do not have enough credit.',
  status: 403,
  extensions: z.object({ balance: z.number(), accounts: z.array(z.string()) }),
})

// A Standard Schema that exposes no `shape`: any object passes.
const anyMembers: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) => ({ value: value as Record<string, unknown> }),
  },
}

describe('defineProblem', () => {
  test('create() gives the standard members first, then the typed extensions', () => {
    const problem = outOfCredit.create({
      detail: 'Your current balance is 30, but that costs 50.',
      instance: '/account/12345/msgs/abc',
      balance: 30,
      accounts: ['/account/12345'],
    })
    expect(Object.keys(problem)).toEqual([
      'type',
      'title',
      'status',
      'detail',
      'instance',
      'balance',
      'accounts',
    ])
    expect(problem.balance).toBe(30)
    expectTypeOf(problem.balance).toEqualTypeOf<number>()
  })

  test('create() without extensions needs no argument', () => {
    const gone = defineProblem({ type: 'gone', title: 'Gone.', status: 410 })
    expect(gone.create()).toEqual({ type: 'gone', title: 'Gone.', status: 410 })
    expect(gone.code).toBe('GONE')
  })

  test('a status override changes the occurrence, not the type', () => {
    const reused = defineProblem({ type: 'reused', title: 'Reused.', status: 409 })
    expect(reused.create({ status: 422 }).status).toBe(422)
    expect(reused.status).toBe(409)
  })

  test('error() is a ProblemError carrying the occurrence and the cause', () => {
    const cause = new Error('low balance')
    const error = outOfCredit.error({ balance: 1, accounts: [] }, { cause })
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toBeInstanceOf(Error)
    expect(error.status).toBe(403)
    expect(error.code).toBe('OUT_OF_CREDIT')
    expect(error.cause).toBe(cause)
    expect(error.toProblem()).toMatchObject({ balance: 1, status: 403 })
  })

  test('is() recognises a parsed problem of the type and checks its extensions', () => {
    const wire = { ...outOfCredit.create({ balance: 30, accounts: [] }) }
    expect(outOfCredit.is(wire)).toBe(true)
    expect(outOfCredit.is({ ...wire, balance: 'thirty' })).toBe(false)
    expect(outOfCredit.is({ ...wire, type: 'https://example.com/probs/other' })).toBe(false)
    expect(outOfCredit.is('nope')).toBe(false)
    expect(outOfCredit.is(null)).toBe(false)
  })

  test('is() matches a slug type resolved against the base it was served with', () => {
    const gone = defineProblem({ type: 'gone', title: 'Gone.', status: 410 })
    expect(gone.is({ type: `${DEFAULT_PROBLEM_BASE}gone` })).toBe(true)
    expect(gone.is({ type: 'https://x.test/p/gone' }, { base: 'https://x.test/p/' })).toBe(true)
    expect(gone.is({ type: 'https://x.test/p/gone' })).toBe(false)
  })

  test('SHOULD: extension names follow the RFC 9457 §3.2 naming rule', () => {
    expect(() =>
      defineProblem({
        type: 'x',
        title: 'X',
        status: 400,
        extensions: z.object({ 'invalid-params': z.string() }),
      }),
    ).toThrow(/naming rule/)
    expect(() =>
      defineProblem({
        type: 'x',
        title: 'X',
        status: 400,
        extensions: z.object({ 'invalid-params': z.string() }),
        allowNames: ['invalid-params'],
      }),
    ).not.toThrow()
  })

  test('extensions cannot shadow standard members', () => {
    expect(() =>
      defineProblem({
        type: 'x',
        title: 'X',
        status: 400,
        extensions: z.object({ status: z.string() }),
      }),
    ).toThrow(/shadow/)
  })

  test('SHOULD: a schema without a shape has its extension names checked when an occurrence is created', () => {
    const opaque = defineProblem({
      type: 'x',
      title: 'X',
      status: 400,
      extensions: anyMembers,
    })
    expect(opaque.create({ balance: 1 })).toMatchObject({ balance: 1 })
    expect(() => opaque.create({ 'invalid-params': 1 })).toThrow(/naming rule/)
    expect(() => opaque.create({ title: 'x' } as never)).toThrow(/shadow/)
    const allowed = defineProblem({
      type: 'x',
      title: 'X',
      status: 400,
      extensions: anyMembers,
      allowNames: ['invalid-params'],
    })
    expect(allowed.create({ 'invalid-params': 1 })).toMatchObject({ 'invalid-params': 1 })
  })

  test('the status must be an error status', () => {
    expect(() => defineProblem({ type: 'x', title: 'X', status: 200 })).toThrow(RangeError)
    expect(() => defineProblem({ type: 'x', title: 'X', status: 404.5 })).toThrow(RangeError)
  })
})

describe('defineProblem with a hand-written Standard Schema', () => {
  // No library: a `~standard` object whose validate checks one member.
  const balance: StandardSchemaV1<{ balance: number }> & { shape: { balance: true } } = {
    shape: { balance: true },
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) =>
        typeof (value as { balance?: unknown }).balance === 'number'
          ? { value: value as { balance: number } }
          : { issues: [{ message: 'Expected a number', path: ['balance'] }] },
    },
  }
  const lowBalance = defineProblem({ type: 'low', title: 'Low.', status: 403, extensions: balance })

  test('is() validates with ~standard.validate', () => {
    expect(lowBalance.is(lowBalance.create({ balance: 3 }))).toBe(true)
    expect(lowBalance.is({ type: 'low', balance: '3' })).toBe(false)
  })

  test('a schema whose validation answers a Promise is a TypeError at the first is()', () => {
    const later = defineProblem({
      type: 'later',
      title: 'Later.',
      status: 400,
      extensions: {
        '~standard': { version: 1, vendor: 'test', validate: async (value) => ({ value }) },
      } as StandardSchemaV1<{ count?: number }>,
    })
    expect(later.create({ count: 1 })).toMatchObject({ count: 1 })
    expect(() => later.is({ type: 'later' })).toThrow(TypeError)
    expect(later.is({ type: 'other' })).toBe(false) // another type is refused before validating
  })

  test('zod schemas with an async refinement are refused the same way', () => {
    const asyncZod = defineProblem({
      type: 'az',
      title: 'AZ.',
      status: 400,
      extensions: z.object({ count: z.number().refine(async (n) => n > 0) }),
    })
    expect(() => asyncZod.is({ type: 'az', count: 1 })).toThrow(TypeError)
  })
})

describe('isConformingExtensionName (RFC 9457 §3.2)', () => {
  test.each([
    ['balance', true],
    ['max_bytes', true],
    ['a1_', true],
    ['ab', false],
    ['1abc', false],
    ['_abc', false],
    ['invalid-params', false],
    ['naïve', false],
  ])('%s → %s', (name, expected) => {
    expect(isConformingExtensionName(name)).toBe(expected)
  })
})

describe('resolveProblemType', () => {
  test('keeps absolute URIs and resolves slugs against the base', () => {
    expect(resolveProblemType('about:blank')).toBe('about:blank')
    expect(resolveProblemType('https://e.x/a')).toBe('https://e.x/a')
    expect(resolveProblemType('tag:e.x,2026:a')).toBe('tag:e.x,2026:a')
    expect(resolveProblemType('not-found', 'https://e.x/p/')).toBe('https://e.x/p/not-found')
  })
})

describe('ProblemError', () => {
  test('instanceof works across copies of the class (the error kinds of @api-blocks/core)', async () => {
    const specifier = './error.ts?copy'
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('./error.ts')
    expect(copy.ProblemError).not.toBe(ProblemError)
    const foreign = new copy.ProblemError({ type: 'about:blank', title: 'Bad', status: 400 })
    expect(foreign instanceof ProblemError).toBe(true)
    expect(new Error('x') instanceof ProblemError).toBe(false)
  })

  test('subclasses keep the ordinary prototype check', () => {
    class OtherError extends ProblemError {}
    const plain = new ProblemError({ type: 'about:blank', title: 'Bad', status: 400 })
    expect(plain instanceof OtherError).toBe(false)
    expect(
      new OtherError({ type: 'about:blank', title: 'Bad', status: 400 }) instanceof OtherError,
    ).toBe(true)
  })

  test('the message is the detail, else the title', () => {
    expect(new ProblemError({ type: 'a:b', title: 'T', status: 400 }).message).toBe('T')
    expect(new ProblemError({ type: 'a:b', title: 'T', status: 400, detail: 'D' }).message).toBe(
      'D',
    )
  })
})
