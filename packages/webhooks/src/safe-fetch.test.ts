import type { LookupAddress } from 'node:dns'
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { WebhookError } from './error.ts'
import type { SafeFetchOptions } from './safe-fetch.ts'
import { createSafeFetch } from './safe-fetch.ts'
import type { DnsLookup } from './ssrf/guard.ts'
import { createSsrfGuard } from './ssrf/guard.ts'

interface Seen {
  method: string
  host: string
  path: string
  headers: IncomingHttpHeaders
}

let server: Server
let port: number
let seen: Seen[] = []

// The first hop looks public: `api.public.test` is an allowed origin (standing in for a public
// host). Every other name resolves to this machine's loopback, which the guard refuses.
const names: Record<string, LookupAddress[]> = {
  'api.public.test': [{ address: '127.0.0.1', family: 4 }],
  'other.public.test': [{ address: '127.0.0.1', family: 4 }],
  'internal.attacker.test': [{ address: '127.0.0.1', family: 4 }],
}
const lookup: DnsLookup = (hostname, _options, callback) => {
  const addresses = names[hostname]
  if (addresses === undefined) {
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
    error.code = 'ENOTFOUND'
    callback(error, [])
  } else callback(null, addresses)
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x')
    seen.push({
      method: request.method ?? '',
      host: request.headers.host ?? '',
      path: url.pathname,
      headers: request.headers,
    })
    const redirect = (status: number, location: string) => {
      response.writeHead(status, { location })
      response.end('see elsewhere')
    }
    const match = /^\/chain\/(\d+)$/.exec(url.pathname)
    if (match) {
      const left = Number(match[1])
      return left === 0 ? response.end('end of chain') : redirect(302, `/chain/${left - 1}`)
    }
    switch (url.pathname) {
      case '/ok':
        response.setHeader('set-cookie', ['a=1', 'b=2'])
        return response.end('{"id":"ord_1"}')
      case '/secret':
        return response.end('the keys')
      case '/to':
        return redirect(
          Number(url.searchParams.get('status') ?? 302),
          url.searchParams.get('location')!,
        )
      case '/loop':
        return redirect(307, '/loop')
      case '/no-location':
        response.statusCode = 302
        return response.end('nowhere')
      case '/empty':
        response.statusCode = 204
        return response.end()
      case '/big':
        response.setHeader('content-length', String(2 * 1024 * 1024))
        return response.end(Buffer.alloc(2 * 1024 * 1024, 'x'))
      case '/big-chunked':
        // No Content-Length: the limit is enforced while reading.
        for (let i = 0; i < 32; i++) response.write(Buffer.alloc(64 * 1024, 'x'))
        return response.end()
      case '/hang':
        return
      default:
        response.statusCode = 404
        return response.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const publicOrigin = () => `http://api.public.test:${port}`

async function withFetch<T>(
  run: (safeFetch: ReturnType<typeof createSafeFetch>) => Promise<T>,
  options: SafeFetchOptions = {},
  allowedOrigins = [publicOrigin()],
): Promise<T> {
  const guard = createSsrfGuard({ lookup, allowedOrigins })
  const safeFetch = createSafeFetch({ guard, ...options })
  seen = []
  try {
    return await run(safeFetch)
  } finally {
    await safeFetch.close()
    await guard.close()
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

const to = (location: string, status = 302) =>
  `${publicOrigin()}/to?status=${status}&location=${encodeURIComponent(location)}`

describe('createSafeFetch', () => {
  test('fetches, with the body, the status, every header field and the final URL', async () => {
    await withFetch(async (safeFetch) => {
      const response = await safeFetch(`${publicOrigin()}/ok#fragment`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ id: 'ord_1' })
      expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2'])
      expect(response.url).toBe(`${publicOrigin()}/ok`)
    })
  })

  test('follows a chain of redirects within the cap and reports the final URL', async () => {
    await withFetch(async (safeFetch) => {
      const response = await safeFetch(`${publicOrigin()}/chain/5`)
      expect(await response.text()).toBe('end of chain')
      expect(response.url).toBe(`${publicOrigin()}/chain/0`)
      expect(seen.map((hop) => hop.path)).toEqual([5, 4, 3, 2, 1, 0].map((n) => `/chain/${n}`))
    })
  })

  test('past maxRedirects it is TOO_MANY_REDIRECTS', async () => {
    await withFetch(
      async (safeFetch) => {
        const error = await rejection(safeFetch(`${publicOrigin()}/loop`))
        expect(error).toBeInstanceOf(WebhookError)
        expect(error).toMatchObject({ code: 'TOO_MANY_REDIRECTS' })
        expect(seen).toHaveLength(3) // the first request and 2 redirects
        expect(await rejection(safeFetch(`${publicOrigin()}/chain/3`))).toMatchObject({
          code: 'TOO_MANY_REDIRECTS',
        })
        expect(await (await safeFetch(`${publicOrigin()}/chain/2`)).text()).toBe('end of chain')
      },
      { maxRedirects: 2 },
    )
  })

  describe('a public-looking URL that redirects to a private address MUST be refused at that hop', () => {
    test.each([
      ['http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
      ['http://[fd00:ec2::254]/latest/meta-data/'],
      ['http://100.100.100.200/latest/meta-data/'],
      ['http://10.0.0.1/admin'],
      ['http://0x7f.1:PORT/secret'],
      ['http://2130706433:PORT/secret'],
      ['http://[::ffff:127.0.0.1]:PORT/secret'],
      ['http://[::1]:PORT/secret'],
      ['http://localhost:PORT/secret'],
      ['http://internal.attacker.test:PORT/secret'],
      ['//internal.attacker.test:PORT/secret'],
      ['https://127.0.0.1:PORT/secret'],
    ])('%s', async (location) => {
      await withFetch(async (safeFetch) => {
        const target = location.replace('PORT', String(port))
        for (const status of [301, 302, 303, 307, 308]) {
          const error = await rejection(safeFetch(to(target, status)))
          expect(error).toBeInstanceOf(WebhookError)
          expect(error).toMatchObject({ code: 'URL_REFUSED' })
        }
        // Only the public hops reached the server, never /secret.
        expect(seen.map((hop) => hop.path)).toEqual(Array(5).fill('/to'))
      })
    })

    test('the same hop is followed when its origin is allowed (the test can fail)', async () => {
      await withFetch(
        async (safeFetch) => {
          const response = await safeFetch(to(`http://internal.attacker.test:${port}/secret`))
          expect(await response.text()).toBe('the keys')
        },
        {},
        [publicOrigin(), `http://internal.attacker.test:${port}`],
      )
    })

    test('a second redirect deeper in the chain is checked too', async () => {
      await withFetch(
        async (safeFetch) => {
          const inner = `http://other.public.test:${port}/to?location=${encodeURIComponent('http://169.254.169.254/')}`
          expect(await rejection(safeFetch(to(inner)))).toMatchObject({ code: 'URL_REFUSED' })
          expect(seen.map((hop) => hop.host)).toEqual([
            `api.public.test:${port}`,
            `other.public.test:${port}`,
          ])
        },
        {},
        [publicOrigin(), `http://other.public.test:${port}`],
      )
    })
  })

  test.each([
    ['file:///etc/passwd'],
    ['gopher://127.0.0.1:6379/_INFO'],
    ['ftp://example.com/'],
    ['javascript:alert(1)'],
    ['http://user:pass@api.public.test/'],
  ])('a redirect to %s is URL_INVALID', async (location) => {
    await withFetch(async (safeFetch) => {
      expect(await rejection(safeFetch(to(location)))).toMatchObject({ code: 'URL_INVALID' })
    })
  })

  test.each([['file:///etc/passwd'], ['not a url'], ['http://user@api.public.test/']])(
    'the URL %s is URL_INVALID',
    async (url) => {
      await withFetch(async (safeFetch) => {
        expect(await rejection(safeFetch(url))).toMatchObject({ code: 'URL_INVALID' })
        expect(seen).toEqual([])
      })
    },
  )

  test('303 and the others keep GET; HEAD stays HEAD', async () => {
    await withFetch(async (safeFetch) => {
      const response = await safeFetch(to('/ok', 301), { method: 'HEAD' })
      expect(response.status).toBe(200)
      expect(await response.text()).toBe('')
      expect(seen.map((hop) => hop.method)).toEqual(['HEAD', 'HEAD'])
    })
  })

  test('Authorization and Cookie are dropped when a redirect leaves the origin, kept within it', async () => {
    await withFetch(
      async (safeFetch) => {
        const headers = { authorization: 'Bearer t', cookie: 'session=1', 'x-trace': 'abc' }
        await safeFetch(to('/ok'), { headers })
        expect(seen[1]?.headers).toMatchObject(headers)
        await safeFetch(to(`http://other.public.test:${port}/ok`), { headers })
        expect(seen[3]?.headers.authorization).toBeUndefined()
        expect(seen[3]?.headers.cookie).toBeUndefined()
        expect(seen[3]?.headers['x-trace']).toBe('abc')
      },
      {},
      [publicOrigin(), `http://other.public.test:${port}`],
    )
  })

  test('a 3xx without Location is the response', async () => {
    await withFetch(async (safeFetch) => {
      const response = await safeFetch(`${publicOrigin()}/no-location`)
      expect(response.status).toBe(302)
      expect(await response.text()).toBe('nowhere')
    })
  })

  test('a 204 has a null body', async () => {
    await withFetch(async (safeFetch) => {
      const response = await safeFetch(`${publicOrigin()}/empty`)
      expect(response.status).toBe(204)
      expect(response.body).toBeNull()
    })
  })

  test.each([['/big'], ['/big-chunked']])(
    '%s over maxBodyBytes is BODY_TOO_LARGE',
    async (path) => {
      await withFetch(async (safeFetch) => {
        const error = await rejection(safeFetch(`${publicOrigin()}${path}`))
        expect(error).toMatchObject({ code: 'BODY_TOO_LARGE' })
        expect((error as WebhookError).toProblem()).toMatchObject({
          status: 413,
          max_bytes: 1024 * 1024,
        })
        // Within a larger limit the same body is read.
        const guard = createSsrfGuard({ lookup, allowedOrigins: [publicOrigin()] })
        const larger = createSafeFetch({ guard, maxBodyBytes: 4 * 1024 * 1024 })
        const response = await larger(`${publicOrigin()}${path}`)
        expect((await response.arrayBuffer()).byteLength).toBe(2 * 1024 * 1024)
        await guard.close()
      })
    },
  )

  test('the deadline covers the call: a TimeoutError DOMException', async () => {
    await withFetch(
      async (safeFetch) => {
        const error = await rejection(safeFetch(`${publicOrigin()}/hang`))
        expect(error).toBeInstanceOf(DOMException)
        expect((error as DOMException).name).toBe('TimeoutError')
      },
      { timeoutMs: 100 },
    )
  })

  test("the caller's signal aborts with its reason", async () => {
    await withFetch(async (safeFetch) => {
      const controller = new AbortController()
      const pending = safeFetch(`${publicOrigin()}/hang`, { signal: controller.signal })
      const reason = new Error('stop')
      setTimeout(() => controller.abort(reason), 20)
      expect(await rejection(pending)).toBe(reason)
    })
  })

  test('a connection failure is a TypeError with the cause', async () => {
    await withFetch(async (safeFetch) => {
      const error = await rejection(safeFetch(`http://unknown.test:${port}/`))
      expect(error).toBeInstanceOf(TypeError)
      expect((error as Error).message).toBe('fetch failed')
      expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ENOTFOUND')
    })
  })

  test('only GET and HEAD', async () => {
    await withFetch(async (safeFetch) => {
      await expect(
        safeFetch(`${publicOrigin()}/ok`, { method: 'POST' as 'GET' }),
      ).rejects.toBeInstanceOf(TypeError)
    })
  })

  test('the default guard refuses loopback', async () => {
    const safeFetch = createSafeFetch()
    try {
      expect(await rejection(safeFetch(`http://127.0.0.1:${port}/ok`))).toMatchObject({
        code: 'URL_REFUSED',
      })
    } finally {
      await safeFetch.close()
    }
  })

  test('options are checked at construction', () => {
    expect(() => createSafeFetch({ maxRedirects: -1 })).toThrow(RangeError)
    expect(() => createSafeFetch({ timeoutMs: 0 })).toThrow(RangeError)
    expect(() => createSafeFetch({ maxBodyBytes: 1.5 })).toThrow(RangeError)
  })
})
