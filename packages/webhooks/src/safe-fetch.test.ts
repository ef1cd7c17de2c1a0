import type { LookupAddress } from 'node:dns'
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo, Server as NetServer } from 'node:net'
import { createServer as createNetServer } from 'node:net'
import { getCACertificates, setDefaultCACertificates } from 'node:tls'
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
let tlsServer: Server
let tlsPort: number
let rawServer: NetServer
let rawPort: number

// A self-signed certificate for secure.public.test and 127.0.0.1 (2020 to 2120), made for these
// tests only and trusted in this test file's worker alone: an https: origin to redirect from.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkR269mWx+2isC/JY
TpGgOjRwvW5EcuYuoa2dpDemZKehRANCAAS3SpMKXVMTXnDwHRZGWUWOoF8TIUgd
PbsxSUpnXNEsQ06rw7yGE1p6j0R2qrxDhi/ggZb00j8tdC1X5VFuJiDz
-----END PRIVATE KEY-----`
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBdzCCARygAwIBAgIUOUX9uvUZn7tfGjWtgmSfyBsrBWMwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSc2VjdXJlLnB1YmxpYy50ZXN0MCAXDTIwMDEwMTAwMDAwMFoY
DzIxMjAwMTAxMDAwMDAwWjAdMRswGQYDVQQDDBJzZWN1cmUucHVibGljLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAS3SpMKXVMTXnDwHRZGWUWOoF8TIUgd
PbsxSUpnXNEsQ06rw7yGE1p6j0R2qrxDhi/ggZb00j8tdC1X5VFuJiDzozgwNjAj
BgNVHREEHDAaghJzZWN1cmUucHVibGljLnRlc3SHBH8AAAEwDwYDVR0TAQH/BAUw
AwEB/zAKBggqhkjOPQQDAgNJADBGAiEAj7pgczMryxSkC1nMemMRnlJ13KBNLORr
m/pdDrDZQIMCIQCfotBSGtG79zpt1dD/qYXw7AyFjt3UqIhekRGFsjKt0w==
-----END CERTIFICATE-----`
const defaultCertificates = getCACertificates('default')

// The first hop looks public: `api.public.test` is an allowed origin (standing in for a public
// host). Every other name resolves to this machine's loopback, which the guard refuses.
const names: Record<string, LookupAddress[]> = {
  'api.public.test': [{ address: '127.0.0.1', family: 4 }],
  'other.public.test': [{ address: '127.0.0.1', family: 4 }],
  'internal.attacker.test': [{ address: '127.0.0.1', family: 4 }],
  'secure.public.test': [{ address: '127.0.0.1', family: 4 }],
  'raw.public.test': [{ address: '127.0.0.1', family: 4 }],
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
      case '/head-of-big':
        // The answer to a HEAD carries the GET's Content-Length and no content (RFC 9110 §9.3.2).
        response.setHeader('content-length', String(5_000_000))
        if (request.method === 'HEAD') return response.end()
        return response.end(Buffer.alloc(5_000_000, 'x'))
      case '/no-content-big':
        response.writeHead(Number(url.searchParams.get('status')), { 'content-length': '2000000' })
        return response.end()
      case '/declared-big-then-hang':
        // Declares 2 MB, sends 1 KB and waits: only the Content-Length check refuses it in time.
        response.writeHead(200, { 'content-length': '2000000' })
        response.write(Buffer.alloc(1024, 'x'))
        return
      default:
        response.statusCode = 404
        return response.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port

  setDefaultCACertificates([...defaultCertificates, TEST_CERT])
  tlsServer = createHttpsServer({ key: TEST_KEY, cert: TEST_CERT }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://x')
    seen.push({
      method: request.method ?? '',
      host: request.headers.host ?? '',
      path: url.pathname,
      headers: request.headers,
    })
    if (url.pathname === '/to') {
      response.writeHead(302, { location: url.searchParams.get('location')! })
      response.end()
    } else response.end('secure')
  })
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve))
  tlsPort = (tlsServer.address() as AddressInfo).port

  // A whole answer in one write, so undici has finished the body before the safe fetch looks
  // at it: a Content-Length of 200 and 200 bytes.
  rawServer = createNetServer((socket) => {
    socket.on('error', () => undefined)
    socket.once('data', () =>
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 200\r\n\r\n${'x'.repeat(200)}`),
    )
  })
  await new Promise<void>((resolve) => rawServer.listen(0, '127.0.0.1', resolve))
  rawPort = (rawServer.address() as AddressInfo).port
})
afterAll(async () => {
  setDefaultCACertificates(defaultCertificates)
  server.closeAllConnections()
  tlsServer.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await new Promise((resolve) => tlsServer.close(resolve))
  await new Promise((resolve) => rawServer.close(resolve))
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

  test('every header field but Accept, Accept-Language and User-Agent is dropped when a redirect leaves the origin, all kept within it', async () => {
    await withFetch(
      async (safeFetch) => {
        const kept = { accept: 'application/json', 'accept-language': 'de', 'user-agent': 'ua/1' }
        const credentials = {
          authorization: 'Bearer t',
          cookie: 'session=1',
          'x-api-key': 'k3y',
          'private-token': 'p',
          'x-trace': 'abc',
        }
        const headers = { ...kept, ...credentials }
        await safeFetch(to('/ok'), { headers })
        expect(seen[1]?.headers).toMatchObject(headers)
        await safeFetch(to(`http://other.public.test:${port}/ok`), { headers })
        expect(seen[2]?.headers).toMatchObject(headers)
        expect(seen[3]?.headers).toMatchObject(kept)
        for (const name of Object.keys(credentials)) expect(seen[3]?.headers[name]).toBeUndefined()
        // Dropped for the rest of the chain, also when a later hop comes back to the origin.
        const back = `http://other.public.test:${port}/to?location=${encodeURIComponent(`${publicOrigin()}/ok`)}`
        await safeFetch(to(back), { headers })
        expect(seen[6]?.host).toBe(`api.public.test:${port}`)
        expect(seen[6]?.headers['x-api-key']).toBeUndefined()
      },
      {},
      [publicOrigin(), `http://other.public.test:${port}`],
    )
  })

  describe('a redirect from https: to http:', () => {
    const secureOrigin = () => `https://secure.public.test:${tlsPort}`
    const origins = () => [publicOrigin(), secureOrigin()]
    const downgrade = () =>
      `${secureOrigin()}/to?location=${encodeURIComponent(`${publicOrigin()}/ok`)}`

    test('is URL_INVALID, and the http: hop is never sent', async () => {
      await withFetch(
        async (safeFetch) => {
          // The https: origin itself is reached (its certificate is trusted).
          expect(await (await safeFetch(`${secureOrigin()}/ok`)).text()).toBe('secure')
          const error = await rejection(safeFetch(downgrade()))
          expect(error).toBeInstanceOf(WebhookError)
          expect(error).toMatchObject({ code: 'URL_INVALID' })
          expect(seen.map((hop) => hop.path)).toEqual(['/ok', '/to'])
        },
        {},
        origins(),
      )
    })

    test('is followed with allowHttpsDowngrade (the test can fail)', async () => {
      await withFetch(
        async (safeFetch) => {
          const response = await safeFetch(downgrade())
          expect(await response.json()).toEqual({ id: 'ord_1' })
          expect(response.url).toBe(`${publicOrigin()}/ok`)
        },
        { allowHttpsDowngrade: true },
        origins(),
      )
    })

    test('http: to https: is followed', async () => {
      await withFetch(
        async (safeFetch) => {
          const response = await safeFetch(to(`${secureOrigin()}/ok`))
          expect(await response.text()).toBe('secure')
        },
        {},
        origins(),
      )
    })
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

  describe('an answer without content is never checked against maxBodyBytes', () => {
    // These once ended the process: the body, declared too large, was destroyed while nothing
    // read it, and undici's abort error had no listener. Vitest fails the run on that error.
    test('HEAD of a resource over the limit: 200, its Content-Length, no body', async () => {
      await withFetch(async (safeFetch) => {
        const response = await safeFetch(`${publicOrigin()}/head-of-big`, { method: 'HEAD' })
        expect(response.status).toBe(200)
        expect(response.headers.get('content-length')).toBe('5000000')
        expect(response.body).toBeNull()
        // The GET of the same resource is over the limit.
        expect(await rejection(safeFetch(`${publicOrigin()}/head-of-big`))).toMatchObject({
          code: 'BODY_TOO_LARGE',
        })
      })
    })

    test.each([[204], [304]])('%i with a Content-Length over the limit', async (status) => {
      await withFetch(async (safeFetch) => {
        const response = await safeFetch(`${publicOrigin()}/no-content-big?status=${status}`)
        expect(response.status).toBe(status)
        expect(response.body).toBeNull()
      })
    })
  })

  test('a whole answer in one packet over a small maxBodyBytes is BODY_TOO_LARGE, and the process lives on', async () => {
    await withFetch(
      async (safeFetch) => {
        const error = await rejection(safeFetch(`http://raw.public.test:${rawPort}/`))
        expect(error).toMatchObject({ code: 'BODY_TOO_LARGE' })
        // Give undici's abort error its turn: unheard, it would end the process here.
        await new Promise((resolve) => setTimeout(resolve, 50))
        const larger = await withFetch(
          async (fetchMore) => (await fetchMore(`http://raw.public.test:${rawPort}/`)).text(),
          { maxBodyBytes: 200 },
          [`http://raw.public.test:${rawPort}`],
        )
        expect(larger).toHaveLength(200)
      },
      { maxBodyBytes: 100 },
      [`http://raw.public.test:${rawPort}`],
    )
  })

  test('a declared Content-Length over the limit is refused before the body comes', async () => {
    // The server sends 1 KB of the 2 MB it declares and waits. Read chunk by chunk, the call
    // would end at the deadline (FETCH_TIMEOUT) instead.
    await withFetch(
      async (safeFetch) => {
        const error = await rejection(safeFetch(`${publicOrigin()}/declared-big-then-hang`))
        expect(error).toMatchObject({ code: 'BODY_TOO_LARGE' })
      },
      { timeoutMs: 2_000 },
    )
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

  test('the deadline covers the call: FETCH_TIMEOUT, 503', async () => {
    await withFetch(
      async (safeFetch) => {
        const error = await rejection(safeFetch(`${publicOrigin()}/hang`))
        expect(error).toBeInstanceOf(WebhookError)
        expect(error).toMatchObject({ code: 'FETCH_TIMEOUT' })
        expect((error as WebhookError).toProblem().status).toBe(503)
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

  test('a connection failure is FETCH_FAILED, 503, with the cause', async () => {
    await withFetch(async (safeFetch) => {
      const error = await rejection(safeFetch(`http://unknown.test:${port}/`))
      expect(error).toBeInstanceOf(WebhookError)
      expect(error).toMatchObject({ code: 'FETCH_FAILED' })
      expect((error as WebhookError).toProblem().status).toBe(503)
      expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('ENOTFOUND')
      // A closed port: refused.
      const closed = createNetServer()
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
      const closedPort = (closed.address() as AddressInfo).port
      await new Promise((resolve) => closed.close(resolve))
      const refused = await withFetch(
        (fetchClosed) => rejection(fetchClosed(`http://127.0.0.1:${closedPort}/`)),
        {},
        [`http://127.0.0.1:${closedPort}`],
      )
      expect(refused).toMatchObject({ code: 'FETCH_FAILED' })
      expect(((refused as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED')
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
