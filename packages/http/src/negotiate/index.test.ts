import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import {
  negotiate,
  negotiateContentLanguage,
  negotiatedOf,
  negotiation,
  requireContentType,
} from './index.ts'

const url = 'https://api.example/v1/orders'

describe('negotiateContentLanguage (RFC 4647 §3.4 lookup, shared with problem-details)', () => {
  test('truncates ranges and falls back', () => {
    expect(negotiateContentLanguage('de-CH-1996, en;q=0.5', ['en', 'de'], 'en')).toEqual({
      choice: 'de',
      vary: ['Accept-Language'],
    })
    expect(negotiateContentLanguage('ja', ['en', 'de'], 'en').choice).toBe('en')
  })

  test('a value over the limit is treated as absent', () => {
    expect(negotiateContentLanguage(`${'de, '.repeat(400)}de`, ['en', 'de'], 'en').choice).toBe(
      'en',
    )
  })
})

describe('negotiate', () => {
  test('negotiates only the dimensions offered, and lists what it consulted', () => {
    const request = new Request(url, {
      headers: { accept: 'text/csv', 'accept-language': 'fr-CA', 'accept-encoding': 'br' },
    })
    expect(negotiate(request, { types: ['application/json', 'text/csv'] })).toEqual({
      type: 'text/csv',
      language: undefined,
      encoding: undefined,
      vary: ['Accept'],
    })
    expect(
      negotiate(request, {
        types: ['application/json'],
        languages: ['en', 'fr'],
        encodings: ['br'],
      }),
    ).toEqual({
      type: undefined,
      language: 'fr',
      encoding: 'br',
      vary: ['Accept', 'Accept-Language', 'Accept-Encoding'],
    })
  })

  test('the default language is the first offered unless named', () => {
    const request = new Request(url, { headers: { 'accept-language': 'ja' } })
    expect(negotiate(request, { languages: ['en', 'de'] }).language).toBe('en')
    expect(negotiate(request, { languages: ['en', 'de'], defaultLanguage: 'de' }).language).toBe(
      'de',
    )
  })

  test('property: any header values give a result, never an exception', () => {
    const value = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 200,
    })
    fc.assert(
      fc.property(value, value, value, (accept, language, encoding) => {
        const request = new Request(url, {
          headers: { accept, 'accept-language': language, 'accept-encoding': encoding },
        })
        const result = negotiate(request, {
          types: ['application/json', 'text/csv'],
          languages: ['en', 'de'],
          encodings: ['gzip'],
          matchSuffix: true,
        })
        expect(['en', 'de']).toContain(result.language)
      }),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})

describe('negotiation middleware', () => {
  const handler = async (request: Request) => Response.json(negotiatedOf(request))

  test('stores the result for the handler and merges Vary into the response', async () => {
    const app = compose(negotiation({ types: ['application/json'], languages: ['en', 'de'] }))(
      async (request) => {
        const response = await handler(request)
        response.headers.set('vary', 'Authorization')
        return response
      },
    )
    const response = await app(new Request(url, { headers: { 'accept-language': 'de' } }))
    expect(response.headers.get('vary')).toBe('Authorization, Accept, Accept-Language')
    expect(await response.json()).toMatchObject({ type: 'application/json', language: 'de' })
  })

  test('without opting in, an unacceptable Accept reaches the handler with type undefined', async () => {
    const app = compose(negotiation({ types: ['application/json'] }))(handler)
    const response = await app(new Request(url, { headers: { accept: 'image/png' } }))
    expect(response.status).toBe(200)
    expect(await response.json()).not.toHaveProperty('type')
  })

  test('opted in: 406 not-acceptable listing the offers, with Vary: Accept (RFC 9110 §15.5.7)', async () => {
    let called = false
    const app = compose(
      negotiation({ types: ['application/json', 'text/csv'], notAcceptable: true }),
    )(async () => {
      called = true
      return new Response()
    })
    const response = await app(new Request(url, { headers: { accept: 'image/png' } }))
    expect(response.status).toBe(406)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    // The problem's title is localised too, so Accept-Language joins the list.
    expect(response.headers.get('vary')?.split(', ')).toContain('Accept')
    expect(await response.json()).toMatchObject({ available: ['application/json', 'text/csv'] })
    expect(called).toBe(false)
  })

  test('a thrown error still gets the Vary tokens', async () => {
    const app = compose(negotiation({ languages: ['en'] }))(async () => {
      throw new Error('x')
    })
    const response = await app(new Request(url))
    expect(response.status).toBe(500)
    expect(response.headers.get('vary')).toContain('Accept-Language')
  })
})

describe('requireContentType (415, RFC 9110 §15.5.16)', () => {
  const app = compose(requireContentType(['application/json', 'application/*+json']))(
    async () => new Response('ok'),
  )

  test('a JSON body passes, parameters and +json included', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/merge-patch+json',
    ]) {
      const response = await app(
        new Request(url, { method: 'POST', body: '{}', headers: { 'content-type': type } }),
      )
      expect(response.status).toBe(200)
    }
  })

  test('a body with another or no Content-Type SHOULD be answered 415, listing what is accepted', async () => {
    const wrong = await app(
      new Request(url, {
        method: 'POST',
        body: 'a=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    expect(wrong.status).toBe(415)
    expect(await wrong.json()).toMatchObject({
      accepted: ['application/json', 'application/*+json'],
    })
    const bare = new Request(url, { method: 'POST', body: new Blob(['{}']) })
    expect(bare.headers.has('content-type')).toBe(false)
    expect((await app(bare)).status).toBe(415)
  })

  test('requests without content are not checked', async () => {
    expect((await app(new Request(url))).status).toBe(200)
    const empty = new Request(url, { method: 'DELETE', headers: { 'content-length': '0' } })
    expect((await app(empty)).status).toBe(200)
  })
})
