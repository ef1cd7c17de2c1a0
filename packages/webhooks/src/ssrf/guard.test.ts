import type { LookupAddress } from 'node:dns'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { hostileNames, hostileUrls } from '../../test/hostile-urls.ts'
import { WebhookError } from '../error.ts'
import type { DnsLookup } from './guard.ts'
import { createSsrfGuard, isAddressRefusal } from './guard.ts'

/** Resolves the names of a table; anything else does not exist. */
function tableLookup(
  names: Readonly<Record<string, readonly LookupAddress[]>>,
  calls: string[] = [],
): DnsLookup {
  return (hostname, _options, callback) => {
    calls.push(hostname)
    const addresses = names[hostname]
    if (addresses === undefined) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
      error.code = 'ENOTFOUND'
      setImmediate(() => callback(error, []))
    } else setImmediate(() => callback(null, [...addresses]))
  }
}

let server: Server
let port: number
let hits = 0

beforeAll(async () => {
  // Dual stack: 127.0.0.1, ::1 and ::ffff:127.0.0.1 all reach it, so a refused request is
  // refused by the guard, not by an empty port.
  server = createServer((_request, response) => {
    hits++
    response.end('reached')
  })
  await new Promise<void>((resolve) => server.listen(0, '::', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

/** The table's URL aimed at the test server's port, without what undici would not send. */
function aimed(url: string): string {
  const target = new URL(url)
  target.port = String(port)
  target.username = ''
  target.password = ''
  target.hash = ''
  return target.href
}

async function refusalOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a refusal, got an answer')
}

describe('the hostile URL table', () => {
  test('holds at least 60 URLs', () => {
    expect(hostileUrls.length).toBeGreaterThanOrEqual(60)
    expect(new Set(hostileUrls.map((entry) => entry.url)).size).toBe(hostileUrls.length)
  })

  describe('checkUrl MUST refuse each at registration', () => {
    const guard = createSsrfGuard({ lookup: tableLookup(hostileNames) })
    afterAll(() => guard.close())
    test.each(hostileUrls)('$url ($why): $code', async ({ url, code }) => {
      const error = await refusalOf(guard.checkUrl(url))
      expect(error).toBeInstanceOf(WebhookError)
      expect((error as WebhookError).code).toBe(code)
      expect((error as WebhookError).toProblem().status).toBe(422)
    })
  })

  describe('the dispatcher MUST refuse each at connect time', () => {
    const guard = createSsrfGuard({ lookup: tableLookup(hostileNames) })
    afterAll(() => guard.close())
    const dialled = hostileUrls.filter((entry) => entry.atConnect)
    test('most of the table is dialled', () => {
      expect(dialled.length).toBeGreaterThanOrEqual(60)
    })
    test.each(dialled)('$url ($why)', async ({ url }) => {
      const before = hits
      const error = await refusalOf(request(aimed(url), { dispatcher: guard.dispatcher }))
      expect(isAddressRefusal(error), String(error)).toBe(true)
      expect(hits).toBe(before)
    })
  })

  test('the same loopback forms reach the server when loopback is allowed (the tests can fail)', async () => {
    const guard = createSsrfGuard({
      lookup: tableLookup(hostileNames),
      allowedRanges: ['127.0.0.0/8', '::1/128'],
    })
    try {
      for (const url of [
        'http://127.0.0.1/',
        'http://127.1/',
        'http://2130706433/',
        'http://0x7f.1/',
        'http://0177.0.0.1/',
        'http://%31%32%37.0.0.1/',
        'http://[::1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://[::ffff:7f00:1]/',
        'http://loopback.attacker.test/',
        'http://v6-loopback.attacker.test/',
        'http://mapped.attacker.test/',
        'http://user:pass@127.0.0.1/',
      ]) {
        const response = await request(aimed(url), { dispatcher: guard.dispatcher })
        expect([url, await response.body.text()]).toEqual([url, 'reached'])
        await expect(guard.checkUrl(url.replace('user:pass@', ''))).resolves.toBeInstanceOf(URL)
      }
    } finally {
      await guard.close()
    }
  })
})

describe('DNS rebinding', () => {
  test('MUST refuse at connect time a name that answered a public address at registration', async () => {
    const calls: string[] = []
    let answers = 0
    const lookup: DnsLookup = (hostname, _options, callback) => {
      calls.push(hostname)
      const address = answers++ === 0 ? '93.184.215.14' : '127.0.0.1'
      setImmediate(() => callback(null, [{ address, family: 4 }]))
    }
    const guard = createSsrfGuard({ lookup })
    try {
      const url = await guard.checkUrl(`http://rebind.attacker.test:${port}/hook`)
      expect(url.hostname).toBe('rebind.attacker.test')
      const before = hits
      const error = await refusalOf(request(url, { dispatcher: guard.dispatcher }))
      expect(isAddressRefusal(error)).toBe(true)
      expect((error as WebhookError).message).toContain('127.0.0.1')
      expect(hits).toBe(before)
      // The connector resolved the name itself: the checked address is the dialled one.
      expect(calls).toEqual(['rebind.attacker.test', 'rebind.attacker.test'])
    } finally {
      await guard.close()
    }
  })

  test('MUST check every address the connector is given, not the first', async () => {
    const guard = createSsrfGuard({
      lookup: tableLookup({
        'two.attacker.test': [
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ],
      }),
      allowedRanges: ['127.0.0.0/8'],
    })
    try {
      const error = await refusalOf(
        request(`http://two.attacker.test:${port}/`, { dispatcher: guard.dispatcher }),
      )
      expect(isAddressRefusal(error)).toBe(true)
      expect((error as Error).message).toContain('::1')
    } finally {
      await guard.close()
    }
  })
})

describe('allowedOrigins', () => {
  test('allows exactly that scheme, host and port, whatever it resolves to', async () => {
    const lookup = tableLookup({ 'hooks.internal': [{ address: '127.0.0.1', family: 4 }] })
    const guard = createSsrfGuard({
      lookup,
      allowedOrigins: [`http://127.0.0.1:${port}`, `http://hooks.internal:${port}`],
    })
    try {
      for (const url of [`http://127.0.0.1:${port}/a`, `http://hooks.internal:${port}/b?c=d`]) {
        await expect(guard.checkUrl(url)).resolves.toBeInstanceOf(URL)
        const response = await request(url, { dispatcher: guard.dispatcher })
        expect(await response.body.text()).toBe('reached')
      }
      for (const url of [
        `http://127.0.0.1:${port + 1}/`,
        `https://127.0.0.1:${port}/`,
        `http://[::1]:${port}/`,
        `http://127.0.0.2:${port}/`,
      ]) {
        await expect(guard.checkUrl(url)).rejects.toMatchObject({ code: 'URL_REFUSED' })
        expect(
          isAddressRefusal(await refusalOf(request(url, { dispatcher: guard.dispatcher }))),
        ).toBe(true)
      }
    } finally {
      await guard.close()
    }
  })

  test('default ports and case are normalised', async () => {
    const guard = createSsrfGuard({ allowedOrigins: ['HTTP://LocalHost:80', 'https://127.0.0.1'] })
    try {
      await expect(guard.checkUrl('http://localhost/x')).resolves.toBeInstanceOf(URL)
      await expect(guard.checkUrl('https://127.0.0.1:443/x')).resolves.toBeInstanceOf(URL)
      await expect(guard.checkUrl('http://127.0.0.1/x')).rejects.toMatchObject({
        code: 'URL_REFUSED',
      })
    } finally {
      await guard.close()
    }
  })

  test.each([
    ['http://127.0.0.1:4000/hooks'],
    ['http://127.0.0.1:4000?x'],
    ['ftp://127.0.0.1'],
    ['127.0.0.1:4000'],
    ['http://user@127.0.0.1:4000'],
  ])('%s is not an origin: a TypeError at construction', (origin) => {
    expect(() => createSsrfGuard({ allowedOrigins: [origin] })).toThrow(TypeError)
  })

  test('an invalid CIDR is a TypeError at construction', () => {
    expect(() => createSsrfGuard({ allowedRanges: ['10.0.0.0/33'] })).toThrow(TypeError)
    expect(() => createSsrfGuard({ allowedRanges: ['localhost'] })).toThrow(TypeError)
  })
})

describe('checkUrl', () => {
  test('allows public addresses and names, and returns the parsed URL', async () => {
    const guard = createSsrfGuard({ lookup: tableLookup(hostileNames) })
    try {
      const url = await guard.checkUrl('https://public.example.test/hooks?x=1')
      expect(url.href).toBe('https://public.example.test/hooks?x=1')
      await expect(guard.checkUrl(new URL('http://93.184.215.14:8080/'))).resolves.toBeInstanceOf(
        URL,
      )
      await expect(guard.checkUrl('http://[2606:4700:4700::1111]/')).resolves.toBeInstanceOf(URL)
      await expect(guard.checkUrl('http://[64:ff9b::808:808]/')).resolves.toBeInstanceOf(URL)
    } finally {
      await guard.close()
    }
  })

  test('a name that does not resolve is URL_UNRESOLVABLE', async () => {
    const guard = createSsrfGuard({ lookup: tableLookup({}) })
    try {
      await expect(guard.checkUrl('https://nowhere.test/')).rejects.toMatchObject({
        code: 'URL_UNRESOLVABLE',
      })
    } finally {
      await guard.close()
    }
  })

  test('a resolver that never answers is URL_UNRESOLVABLE after connectTimeoutMs', async () => {
    const guard = createSsrfGuard({ lookup: () => undefined, connectTimeoutMs: 20 })
    try {
      await expect(guard.checkUrl('https://slow.test/')).rejects.toMatchObject({
        code: 'URL_UNRESOLVABLE',
      })
      // And at connect time: the resolver's silence fails the connection, it does not hang.
      const error = await refusalOf(request('http://slow.test/', { dispatcher: guard.dispatcher }))
      expect((error as NodeJS.ErrnoException).code).toBe('ETIMEOUT')
    } finally {
      await guard.close()
    }
  })

  test('a resolver that throws is URL_UNRESOLVABLE', async () => {
    const guard = createSsrfGuard({
      lookup: () => {
        throw new Error('boom')
      },
    })
    try {
      await expect(guard.checkUrl('https://throws.test/')).rejects.toMatchObject({
        code: 'URL_UNRESOLVABLE',
      })
    } finally {
      await guard.close()
    }
  })

  test('a resolver that answers nothing is URL_UNRESOLVABLE', async () => {
    const guard = createSsrfGuard({ lookup: (_name, _options, callback) => callback(null, []) })
    try {
      await expect(guard.checkUrl('https://empty.test/')).rejects.toMatchObject({
        code: 'URL_UNRESOLVABLE',
      })
    } finally {
      await guard.close()
    }
  })

  test('connectTimeoutMs must be a positive whole number', () => {
    expect(() => createSsrfGuard({ connectTimeoutMs: 0 })).toThrow(RangeError)
    expect(() => createSsrfGuard({ connectTimeoutMs: Number.NaN })).toThrow(RangeError)
  })

  test('the default resolver is node:dns (localhost is refused by name before any lookup)', async () => {
    const guard = createSsrfGuard()
    try {
      await expect(guard.checkUrl('http://localhost:1/')).rejects.toMatchObject({
        code: 'URL_REFUSED',
      })
    } finally {
      await guard.close()
    }
  })
})

describe('isAddressRefusal', () => {
  test('finds the refusal in a cause chain and nothing else', () => {
    const refusal = new WebhookError('URL_REFUSED', 'no')
    expect(isAddressRefusal(refusal)).toBe(true)
    expect(isAddressRefusal(new Error('wrapped', { cause: refusal }))).toBe(true)
    expect(isAddressRefusal(new WebhookError('URL_INVALID', 'no'))).toBe(false)
    expect(isAddressRefusal(new Error('ECONNREFUSED'))).toBe(false)
    expect(isAddressRefusal('URL_REFUSED')).toBe(false)
  })
})

describe('checkUrl (properties)', () => {
  test('any string: the URL, or a WebhookError URL_INVALID, URL_REFUSED or URL_UNRESOLVABLE', async () => {
    const guard = createSsrfGuard({ lookup: tableLookup(hostileNames) })
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string(),
            fc.webUrl({ withFragments: true, withQueryParameters: true }),
            fc.ipV4Extended().map((host) => `http://${host}/`),
            fc.ipV6().map((host) => `http://[${host}]/`),
            fc.constantFrom(...hostileUrls.map((entry) => entry.url)),
          ),
          async (url) => {
            try {
              expect(await guard.checkUrl(url)).toBeInstanceOf(URL)
            } catch (error) {
              expect(error).toBeInstanceOf(WebhookError)
              expect(['URL_INVALID', 'URL_REFUSED', 'URL_UNRESOLVABLE']).toContain(
                (error as WebhookError).code,
              )
            }
          },
        ),
        { interruptAfterTimeLimit: 2000 },
      )
    } finally {
      await guard.close()
    }
  })
})
