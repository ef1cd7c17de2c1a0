import type { IncomingMessage } from 'node:http'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { NodeAdapterError } from '../errors.ts'
import type { UrlSource } from './url.ts'
import { requestUrl } from './url.ts'

function incoming(
  url: string,
  headers: Record<string, string> = { host: 'api.example.com' },
  socket: { encrypted?: boolean; localAddress?: string; localPort?: number } = {},
): IncomingMessage {
  const rawHeaders = Object.entries(headers).flat()
  return { url, headers, rawHeaders, socket } as unknown as IncomingMessage
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    return error instanceof NodeAdapterError ? error.code : 'other'
  }
  return undefined
}

describe('requestUrl', () => {
  test.each([
    ['/', 'http://api.example.com/'],
    ['/v1/orders?limit=10', 'http://api.example.com/v1/orders?limit=10'],
    ['/a%20b/%E2%9C%93?q=%F0%9F%8D%95', 'http://api.example.com/a%20b/%E2%9C%93?q=%F0%9F%8D%95'],
    // WHATWG URL normalisation, same as `new Request(url)` would apply.
    ['/a/../b/./c', 'http://api.example.com/b/c'],
    ['/a/%2e%2E/b', 'http://api.example.com/b'],
    ['/sp ace/"quote"', 'http://api.example.com/sp%20ace/%22quote%22'],
    ["/q?it's", 'http://api.example.com/q?it%27s'],
    ['/back\\slash', 'http://api.example.com/back/slash'],
    // RFC 9112 §3.2.1: an origin-form path may start with two slashes; it is not an authority.
    ['//evil.example/x', 'http://api.example.com//evil.example/x'],
  ])('origin-form %s', (target, expected) => {
    expect(requestUrl(incoming(target), {})).toBe(expected)
  })

  test('RFC 9112 §3.2.2: absolute-form replaces Host', () => {
    expect(requestUrl(incoming('http://other.example:8080/p?q'), {})).toBe(
      'http://other.example:8080/p?q',
    )
  })

  test.each(['*', 'example.com:443', 'ftp://example.com/x', 'http://[bad/'])(
    'MUST reject the target %s (asterisk, authority, other schemes)',
    (target) => {
      expect(codeOf(() => requestUrl(incoming(target), {}))).toBe('INVALID_TARGET')
    },
  )

  test.each([
    ['API.Example.COM', 'http://api.example.com/'],
    ['api.example.com:80', 'http://api.example.com/'],
    ['api.example.com:8080', 'http://api.example.com:8080/'],
    ['127.0.0.1:3000', 'http://127.0.0.1:3000/'],
    ['[::1]:3000', 'http://[::1]:3000/'],
    ['[::FFFF:127.0.0.1]', 'http://[::ffff:7f00:1]/'],
    ['api.example.com:080', 'http://api.example.com/'],
  ])('Host %s', (host, expected) => {
    expect(requestUrl(incoming('/', { host }), {})).toBe(expected)
  })

  test.each([
    'evil.example/path',
    'evil.example?x',
    'user@evil.example',
    'evil.example#f',
    'a b',
    'api.example.com:99999',
    '[::1',
    '',
  ])('MUST reject the Host %j', (host) => {
    expect(codeOf(() => requestUrl(incoming('/', { host }), {}))).toBe('INVALID_HOST')
  })

  test('HTTP/1.0 without Host falls back to the local address', () => {
    const req = incoming('/x', {}, { localAddress: '127.0.0.1', localPort: 8080 })
    expect(requestUrl(req, {})).toBe('http://127.0.0.1:8080/x')
    const v6 = incoming('/x', {}, { localAddress: '::1', localPort: 8080 })
    expect(requestUrl(v6, {})).toBe('http://[::1]:8080/x')
  })

  test('a TLS socket gives https', () => {
    expect(requestUrl(incoming('/', undefined, { encrypted: true }), {})).toBe(
      'https://api.example.com/',
    )
  })

  describe('X-Forwarded-Proto and X-Forwarded-Host', () => {
    const forwarded = {
      host: 'internal:8080',
      'x-forwarded-proto': 'HTTPS, http',
      'x-forwarded-host': 'api.example.com, internal',
    }

    test('are ignored unless trustProxy is on', () => {
      expect(requestUrl(incoming('/x', forwarded), {})).toBe('http://internal:8080/x')
    })

    test('give scheme and host (first value) when trustProxy is on', () => {
      expect(requestUrl(incoming('/x', forwarded), { trustProxy: true })).toBe(
        'https://api.example.com/x',
      )
    })

    test('an unknown scheme or a bad host is not trusted blindly', () => {
      const odd = { host: 'internal', 'x-forwarded-proto': 'gopher' }
      expect(requestUrl(incoming('/x', odd), { trustProxy: true })).toBe('http://internal/x')
      const bad = { host: 'internal', 'x-forwarded-host': 'evil/x' }
      expect(codeOf(() => requestUrl(incoming('/x', bad), { trustProxy: true }))).toBe(
        'INVALID_HOST',
      )
    })
  })

  test('a framework-resolved protocol, host and target win', () => {
    const source: UrlSource = { protocol: 'HTTPS', host: 'api.example.com', target: '/v1/x' }
    expect(requestUrl(incoming('/x', { host: 'internal' }), source)).toBe(
      'https://api.example.com/v1/x',
    )
  })

  test('property: the result is what the WHATWG URL parser makes of the same text', () => {
    const pathChars = fc.constantFrom(
      ...'aZ09-._~!$&()*+,;=:@/%?#[]{}|^`\'"<> \\.'.split(''),
      '%2e',
      '%2F',
      '..',
      'é',
    )
    const target = fc.array(pathChars, { maxLength: 24 }).map((parts) => `/${parts.join('')}`)
    const hostChars = fc.constantFrom(
      ...'aZ019x-_.:'.split(''),
      'xn--',
      '0x',
      '255',
      '256',
      ':65535',
      ':65536',
      ':99999',
      ':443',
    )
    const host = fc.oneof(
      fc.constantFrom('api.example.com', 'API.example.com:8443', '10.0.0.1:80', '[::1]', '10.1'),
      fc.array(hostChars, { minLength: 1, maxLength: 10 }).map((parts) => parts.join('')),
    )
    fc.assert(
      fc.property(target, host, (path, authority) => {
        let expected: string | undefined
        try {
          expected = new URL(`http://${authority}${path}`).href
        } catch {
          expected = undefined
        }
        const code = codeOf(() => requestUrl(incoming(path, { host: authority }), {}))
        if (expected === undefined) expect(code).toBe('INVALID_HOST')
        else expect(requestUrl(incoming(path, { host: authority }), {})).toBe(expected)
      }),
      { numRuns: 3000, interruptAfterTimeLimit: 4000 },
    )
  })

  test('property: a Host is either refused or stays the authority of the URL', () => {
    const hostChars = fc.constantFrom(...'ab09.-_:[]@/?#\\% \t'.split(''))
    fc.assert(
      fc.property(fc.array(hostChars, { maxLength: 16 }), (chars) => {
        const host = chars.join('')
        let url: string
        try {
          url = requestUrl(incoming('/p?q', { host }), {})
        } catch (error) {
          expect(error).toBeInstanceOf(NodeAdapterError)
          return
        }
        const parsed = new URL(url)
        expect(parsed.pathname).toBe('/p')
        expect(parsed.search).toBe('?q')
        expect(parsed.username + parsed.password).toBe('')
      }),
      { numRuns: 2000, interruptAfterTimeLimit: 4000 },
    )
  })
})
