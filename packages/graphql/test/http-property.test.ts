// Property tests: no request, however malformed, makes the endpoint throw, answer 500, or
// answer an error without a code (docs/spec.md §2.1 and §7.1; CONTRIBUTING: parsers get
// fast-check tests, time-boxed).
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createGraphQLHandler, createOperationPreparer } from '../src/index.ts'
import { makeRootValue, schema } from './http-fixtures.ts'

const budget = { interruptAfterTimeLimit: 3000, numRuns: 10_000 }
const handler = createGraphQLHandler({ schema, rootValue: makeRootValue(), maxBodyBytes: 8192 })
const preparer = createOperationPreparer({ schema })

/** GraphQL-ish text: tokens of the language in any order, so the parser goes deep. */
const soup = fc
  .array(
    fc.constantFrom(
      '{',
      '}',
      '(',
      ')',
      '...',
      'on',
      'Query',
      'hello',
      'items',
      'related',
      'first:',
      '$n',
      '1',
      'a:',
      '@skip(if: true)',
      'fragment F on Query',
      '...F',
      'query',
      'mutation',
      'subscription',
      '__schema',
      '__typename',
      '"s"',
      '[',
      ']',
      ',',
      '#',
      '\n',
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(' '))

const member = fc.oneof(fc.jsonValue(), soup)
const body = fc.record(
  {
    query: fc.oneof(soup, fc.jsonValue()),
    variables: member,
    operationName: member,
    extensions: fc.oneof(
      fc.jsonValue(),
      fc.record({
        persistedQuery: fc.record({
          version: fc.jsonValue(),
          sha256Hash: fc.oneof(fc.string(), fc.jsonValue()),
        }),
      }),
    ),
    documentId: member,
  },
  { requiredKeys: [] },
)

function coded(payload: unknown): boolean {
  const { errors } = payload as { errors?: { extensions?: { code?: unknown } }[] }
  return errors === undefined || errors.every((error) => typeof error.extensions?.code === 'string')
}

describe('never throws, never 500, always coded', () => {
  test('the preparer on arbitrary request members', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (request) => {
        const result = await preparer.prepare(request)
        if (Array.isArray(result)) {
          expect(result.length).toBeGreaterThan(0)
          expect(coded({ errors: result })).toBe(true)
        }
      }),
      budget,
    )
  })

  test('the handler on arbitrary POST bodies (JSON or not) and GET query strings', async () => {
    const raw = fc.oneof(
      body.map((value) => JSON.stringify(value)),
      fc.string({ maxLength: 200 }),
      fc.jsonValue().map((value) => JSON.stringify(value)),
    )
    await fc.assert(
      fc.asyncProperty(
        raw,
        fc.boolean(),
        fc.constantFrom(
          'application/json',
          'application/graphql-response+json',
          'text/event-stream',
        ),
        async (text, viaGet, accept) => {
          const request = viaGet
            ? new Request(
                `http://localhost/graphql?${new URLSearchParams(Object.entries(safeParse(text)))}`,
                { headers: { accept } },
              )
            : new Request('http://localhost/graphql', {
                method: 'POST',
                headers: { 'content-type': 'application/json', accept },
                body: text,
              })
          const response = await handler(request)
          expect(response.status).toBeLessThan(500)
          const type = response.headers.get('content-type') ?? ''
          const payload = await response.text()
          if (type.startsWith('text/event-stream')) {
            for (const line of payload.split('\n')) {
              if (line.startsWith('data: ')) expect(coded(JSON.parse(line.slice(6)))).toBe(true)
            }
          } else {
            expect(coded(JSON.parse(payload))).toBe(true)
          }
        },
      ),
      { ...budget, numRuns: 2000 },
    )
  })
})

/** The members of a JSON object as GET parameters (objects JSON-encoded), or none. */
function safeParse(text: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { query: text }
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [
        key,
        typeof member === 'string' ? member : JSON.stringify(member),
      ]),
    )
  } catch {
    return { query: text }
  }
}
