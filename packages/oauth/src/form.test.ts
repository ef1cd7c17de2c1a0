import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { OAuthError } from './error.ts'
import { MAX_PARAMETERS, parameter, parseUrlEncoded, readForm } from './form.ts'

const budget = { interruptAfterTimeLimit: 2000 }

function formRequest(body: string, type = 'application/x-www-form-urlencoded'): Request {
  return new Request('https://as.example.com/token', {
    method: 'POST',
    headers: { 'content-type': type },
    body,
  })
}

describe('parseUrlEncoded', () => {
  test.each([
    ['a=1&b=2', { a: '1', b: '2' }],
    ['scope=read%3Aorders+write%3Aorders', { scope: 'read:orders write:orders' }],
    ['a=%C3%A9', { a: 'é' }],
    ['a=1&&b=2&', { a: '1', b: '2' }],
    ['a==1', { a: '=1' }],
  ])('%s', (text, expected) => {
    const parsed = parseUrlEncoded(text)!
    expect(Object.fromEntries(parsed.values)).toEqual(expected)
    expect(parsed.duplicates.size).toBe(0)
  })

  test('a parameter without a value MUST be treated as omitted (RFC 6749 §3.1)', () => {
    expect(Object.fromEntries(parseUrlEncoded('a=&b&c=3')!.values)).toEqual({ c: '3' })
  })

  test('a repeated name is reported and dropped, even when one of its values is empty', () => {
    const parsed = parseUrlEncoded('a=1&b=2&a=')!
    expect([...parsed.duplicates]).toEqual(['a'])
    expect(Object.fromEntries(parsed.values)).toEqual({ b: '2' })
  })

  test.each(['a=%', 'a=%zz', 'a=%E0%A4%A', '%ff=1', 'a=%C3'])(
    'a malformed escape or bad UTF-8 (%s) is refused, not kept',
    (text) => {
      expect(parseUrlEncoded(text)).toBeUndefined()
    },
  )

  test(`more than ${MAX_PARAMETERS} parameters are refused`, () => {
    const text = Array.from({ length: MAX_PARAMETERS + 1 }, (_, i) => `p${i}=1`).join('&')
    expect(parseUrlEncoded(text)).toBeUndefined()
  })

  test('property: agrees with URLSearchParams on what it accepts, and never throws', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), fc.string({ minLength: 1 })), {
          selector: ([name]) => name,
          maxLength: 20,
        }),
        (pairs) => {
          const text = new URLSearchParams(pairs).toString()
          const parsed = parseUrlEncoded(text)!
          expect(Object.fromEntries(parsed.values)).toEqual(Object.fromEntries(pairs))
        },
      ),
      budget,
    )
    fc.assert(
      fc.property(fc.string(), (text) => {
        parseUrlEncoded(text)
      }),
      budget,
    )
  })
})

describe('readForm', () => {
  test('reads a form', async () => {
    const form = await readForm(formRequest('grant_type=client_credentials'), 1024)
    expect(form.values.get('grant_type')).toBe('client_credentials')
  })

  test('a charset parameter on the media type is accepted', async () => {
    const form = await readForm(
      formRequest('a=1', 'application/x-www-form-urlencoded; charset=UTF-8'),
      1024,
    )
    expect(form.values.get('a')).toBe('1')
  })

  test.each(['application/json', 'multipart/form-data; boundary=x', 'text/plain'])(
    'another media type (%s) MUST be refused with invalid_request',
    async (type) => {
      await expect(readForm(formRequest('{"a":1}', type), 1024)).rejects.toMatchObject({
        error: 'invalid_request',
        status: 400,
      })
    },
  )

  test('a body over the limit is refused with invalid_request', async () => {
    const error = await readForm(formRequest(`a=${'x'.repeat(2000)}`), 1024).catch((e) => e)
    expect(error).toBeInstanceOf(OAuthError)
    expect(error).toMatchObject({ error: 'invalid_request', code: 'INVALID_REQUEST' })
    expect(error.message).toContain('1024')
  })

  test('duplicated parameters MUST be refused (RFC 6749 §3.1)', async () => {
    await expect(readForm(formRequest('code=a&code=b'), 1024)).rejects.toMatchObject({
      error: 'invalid_request',
    })
  })

  test('bad UTF-8 is refused', async () => {
    const request = new Request('https://as.example.com/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new Uint8Array([0x61, 0x3d, 0xff]),
    })
    await expect(readForm(request, 1024)).rejects.toMatchObject({ error: 'invalid_request' })
  })
})

test('parameter() refuses a value over its limit', () => {
  const parsed = parseUrlEncoded('state=abcdef')!
  expect(parameter(parsed, 'state', 6)).toBe('abcdef')
  expect(() => parameter(parsed, 'state', 5)).toThrow(OAuthError)
  expect(parameter(parsed, 'nonce', 5)).toBeUndefined()
})
