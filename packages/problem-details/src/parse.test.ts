import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import vectors from '../test/rfc9457-vectors.json' with { type: 'json' }
import { problems } from './catalog.ts'
import { parseProblem, readProblem } from './parse.ts'
import { toProblemResponse } from './response.ts'

const json = (body: unknown, status = 400, type = 'application/problem+json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } })

describe('RFC 9457 examples', () => {
  for (const example of vectors.examples) {
    test(`${example.section} parses`, async () => {
      const problem = await readProblem(json(example.body, example.status))
      expect(problem).toBeDefined()
      expect(problem?.status).toBe(example.status)
      if ('expected' in example) expect(problem).toMatchObject(example.expected as object)
      else expect(problem).toMatchObject(example.body)
    })
  }
})

describe('parseProblem', () => {
  test('MUST: members of the wrong JSON type are ignored', () => {
    expect(
      parseProblem({ type: 42, title: ['x'], status: '400', detail: null, instance: {} }),
    ).toEqual({ type: 'about:blank' })
  })

  test('extensions are kept, including __proto__ as a plain member', () => {
    const parsed = parseProblem(JSON.parse('{"type":"a:b","__proto__":{"x":1},"balance":3}'))
    expect(parsed?.['balance']).toBe(3)
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
    expect(Object.hasOwn(parsed ?? {}, '__proto__')).toBe(true)
  })

  test('non-objects are not problems', () => {
    for (const value of [null, 1, 'x', [], true]) expect(parseProblem(value)).toBeUndefined()
  })

  test('status outside 100-599 or fractional is ignored', () => {
    expect(parseProblem({ status: 99 })?.status).toBeUndefined()
    expect(parseProblem({ status: 404.5 })?.status).toBeUndefined()
    expect(parseProblem({ status: 404 })?.status).toBe(404)
  })

  test('never throws, whatever the JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = parseProblem(value)
        if (parsed !== undefined) expect(typeof parsed.type).toBe('string')
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('readProblem', () => {
  test('round trip: a served problem is recognised by its type guard', async () => {
    const served = toProblemResponse(problems.payloadTooLarge.create({ max_bytes: 1024 }))
    const problem = await readProblem(served)
    expect(problems.payloadTooLarge.is(problem)).toBe(true)
    expect(problems.notFound.is(problem)).toBe(false)
  })

  test('the HTTP status is the truth, not the body member', async () => {
    expect((await readProblem(json({ status: 200 }, 503)))?.status).toBe(503)
  })

  test('other media types, invalid JSON, invalid UTF-8 and oversized bodies are not problems', async () => {
    expect(await readProblem(json({}, 400, 'text/html'))).toBeUndefined()
    expect(
      await readProblem(
        new Response('{nope', { headers: { 'content-type': 'application/problem+json' } }),
      ),
    ).toBeUndefined()
    expect(
      await readProblem(
        new Response(new Uint8Array([0x7b, 0xff, 0x7d]), {
          headers: { 'content-type': 'application/problem+json' },
        }),
      ),
    ).toBeUndefined()
    expect(await readProblem(json({ detail: 'x'.repeat(100) }), { maxBytes: 50 })).toBeUndefined()
  })

  test('plain application/json with parameters is accepted', async () => {
    const problem = await readProblem(json({ title: 'T' }, 400, 'Application/JSON; charset=utf-8'))
    expect(problem?.title).toBe('T')
  })
})
