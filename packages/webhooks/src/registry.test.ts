import { decodeBase64 } from '@api-blocks/core'
import { describe, expect, it } from 'vitest'
import type { EndpointStore } from './endpoint-store.ts'
import { WebhookError } from './error.ts'
import { MemoryEndpointStore } from './memory/endpoint-store.ts'
import { createEndpointRegistry } from './registry.ts'
import { createSsrfGuard } from './ssrf/guard.ts'

function counterRandom() {
  let n = 0
  return (bytes: Uint8Array) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = (n + i) & 0xff
    n++
    return bytes
  }
}

async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal')
    },
    (error: unknown) => error,
  )
  expect(error).toBeInstanceOf(WebhookError)
  return error as WebhookError
}

function setup(options: { encryptionKey?: Uint8Array; store?: EndpointStore } = {}) {
  let now = 1_000_000
  const store = options.store ?? new MemoryEndpointStore()
  const registry = createEndpointRegistry({
    store,
    clock: () => now,
    rotationOverlapMs: 60_000,
    ...(options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey }),
  })
  return { registry, store, advance: (ms: number) => (now += ms), now: () => now }
}

describe('createEndpointRegistry: create', () => {
  it('makes an enabled endpoint with a we_ id and a whsec_ secret of 32 random bytes', async () => {
    const { registry, store } = setup()
    const { endpoint, secret } = await registry.create({
      url: 'https://hooks.example.com/a?x=1',
      events: ['order.created'],
    })
    expect(endpoint.id).toMatch(/^we_[A-Za-z0-9_-]{22}$/)
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(decodeBase64(secret.slice(6))?.byteLength).toBe(32)
    expect(endpoint).toMatchObject({
      url: 'https://hooks.example.com/a?x=1',
      events: ['order.created'],
      status: 'enabled',
      disabledReason: null,
      owner: null,
      createdAt: 1_000_000,
      version: 1,
    })
    expect(await store.get(endpoint.id)).toEqual(endpoint)
    expect(await registry.signingSecrets(endpoint, 1_000_000)).toEqual([secret])
    const other = await registry.create({ url: 'https://hooks.example.com/b' })
    expect(other.endpoint.id).not.toBe(endpoint.id)
    expect(other.secret).not.toBe(secret)
    expect(other.endpoint.events).toBeNull()
  })

  it('uses the injected random for ids and secrets', async () => {
    const registry = createEndpointRegistry({
      store: new MemoryEndpointStore(),
      random: counterRandom(),
      clock: () => 0,
    })
    const { endpoint, secret } = await registry.create({ url: 'http://example.com/' })
    expect(endpoint.id).toBe('we_AAECAwQFBgcICQoLDA0ODw')
    expect(secret).toBe(
      `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1)).toString('base64')}`,
    )
  })

  it.each([
    ['not a URL', 'hooks.example.com/a'],
    ['another scheme', 'ftp://hooks.example.com/a'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['credentials', 'https://user:pass@hooks.example.com/'],
    ['a user name', 'https://user@hooks.example.com/'],
    ['a fragment', 'https://hooks.example.com/#x'],
    ['an empty fragment', 'https://hooks.example.com/#'],
    ['more than 2,048 characters', `https://hooks.example.com/${'a'.repeat(2048)}`],
  ])('refuses a URL with %s: URL_INVALID, 422', async (_, url) => {
    const { registry } = setup()
    const error = await refusal(registry.create({ url }))
    expect(error.code).toBe('URL_INVALID')
    expect(error.toProblem().status).toBe(422)
  })

  it('checks the URL through the guard and stores what it returns', async () => {
    const seen: string[] = []
    const registry = createEndpointRegistry({
      store: new MemoryEndpointStore(),
      guard: {
        async checkUrl(url) {
          seen.push(String(url))
          if (new URL(url).hostname === '10.0.0.1')
            throw new WebhookError('URL_REFUSED', 'a private address')
          return new URL(url)
        },
      },
    })
    expect((await refusal(registry.create({ url: 'http://10.0.0.1/' }))).code).toBe('URL_REFUSED')
    const { endpoint } = await registry.create({ url: 'HTTPS://Hooks.Example.COM:443/a' })
    expect(endpoint.url).toBe('https://hooks.example.com/a')
    expect(seen).toEqual(['http://10.0.0.1/', 'https://hooks.example.com/a'])
    // Syntax first: the guard never sees a URL with credentials.
    expect((await refusal(registry.create({ url: 'https://a:b@hooks.example.com/' }))).code).toBe(
      'URL_INVALID',
    )
    expect(seen).toHaveLength(2)
  })

  it('refuses what the SSRF guard refuses, and allows what its allow-list names', async () => {
    const guard = createSsrfGuard({ allowedOrigins: ['http://127.0.0.1:4000'] })
    try {
      const registry = createEndpointRegistry({ store: new MemoryEndpointStore(), guard })
      for (const url of [
        'http://127.0.0.1:4001/',
        'http://169.254.169.254/latest/meta-data',
        'http://[::ffff:10.0.0.1]/',
        'http://0x7f000001/',
      ]) {
        const error = await refusal(registry.create({ url }))
        expect(error.code).toBe('URL_REFUSED')
        expect(error.toProblem()).toMatchObject({ status: 422, errors: [{ pointer: '/url' }] })
      }
      const { endpoint } = await registry.create({ url: 'http://127.0.0.1:4000/hooks' })
      expect(endpoint.url).toBe('http://127.0.0.1:4000/hooks')
    } finally {
      await guard.close()
    }
  })

  it.each([
    ['an empty list', []],
    ['a type without an action', ['order']],
    ['an upper-case type', ['Order.created']],
    ['a wildcard', ['order.*']],
    ['a non-string', [42]],
    ['more than 100 types', Array.from({ length: 101 }, (_, i) => `order.a${i}`)],
    ['not a list', 'order.created'],
  ])('refuses an event selection of %s: EVENTS_INVALID, 422 at /events', async (_, events) => {
    const { registry } = setup()
    const error = await refusal(
      registry.create({ url: 'https://hooks.example.com/', events: events as string[] }),
    )
    expect(error.code).toBe('EVENTS_INVALID')
    expect(error.toProblem()).toMatchObject({ status: 422, errors: [{ pointer: '/events' }] })
  })

  it('drops duplicate types, and refuses types outside eventTypes when given', async () => {
    const registry = createEndpointRegistry({
      store: new MemoryEndpointStore(),
      eventTypes: ['order.created', 'order.deleted'],
    })
    const { endpoint } = await registry.create({
      url: 'https://hooks.example.com/',
      events: ['order.deleted', 'order.created', 'order.deleted'],
    })
    expect(endpoint.events).toEqual(['order.deleted', 'order.created'])
    const error = await refusal(
      registry.create({ url: 'https://hooks.example.com/', events: ['order.updated'] }),
    )
    expect(error.code).toBe('EVENTS_INVALID')
    expect(error.message).toContain('order.updated')
  })
})

describe('createEndpointRegistry: reads', () => {
  it('get() and list() show when each secret was made and ends, never its value (sealed or not)', async () => {
    for (const options of [{}, { encryptionKey: new Uint8Array(32).fill(7) }]) {
      const { registry } = setup(options)
      const { endpoint, secret } = await registry.create({ url: 'https://hooks.example.com/' })
      await registry.rotateSecret(endpoint.id)
      const stored = (await registry.store.get(endpoint.id))!
      const expected = stored.secrets.map(({ createdAt, expiresAt }) => ({ createdAt, expiresAt }))
      const got = await registry.get(endpoint.id)
      const [listed] = await registry.list({ limit: 1 })
      for (const view of [got, listed!]) {
        expect(view).toEqual({ ...stored, secrets: expected })
        const text = JSON.stringify(view)
        expect(text).not.toContain(secret.slice(6))
        for (const s of stored.secrets) expect(text).not.toContain(s.value)
      }
    }
  })
})

describe('createEndpointRegistry: owners', () => {
  it("another owner's endpoint is ENDPOINT_NOT_FOUND for every call; no owner argument reaches all", async () => {
    const { registry } = setup()
    const { endpoint } = await registry.create({
      url: 'https://hooks.example.com/',
      owner: 'alice',
    })
    const unowned = (await registry.create({ url: 'https://hooks.example.com/' })).endpoint
    for (const call of [
      () => registry.get(endpoint.id, 'bob'),
      () => registry.get(endpoint.id, null),
      () => registry.delete(endpoint.id, 'bob'),
      () => registry.rotateSecret(endpoint.id, 'bob'),
      () => registry.setStatus(endpoint.id, 'disabled', 'manual', 'bob'),
      () => registry.get(unowned.id, 'alice'),
      () => registry.get('we_missing', 'alice'),
      () => registry.get('we_missing'),
    ]) {
      const error = await refusal(call())
      expect(error.code).toBe('ENDPOINT_NOT_FOUND')
      expect(error.toProblem().status).toBe(404)
    }
    expect((await registry.get(endpoint.id, 'alice')).id).toBe(endpoint.id)
    expect((await registry.get(endpoint.id)).id).toBe(endpoint.id)
    expect((await registry.get(unowned.id, null)).id).toBe(unowned.id)
    expect((await registry.list({ owner: 'alice', limit: 10 })).map((e) => e.id)).toEqual([
      endpoint.id,
    ])
    expect((await registry.list({ owner: null, limit: 10 })).map((e) => e.id)).toEqual([unowned.id])
    expect(await registry.list({ limit: 10 })).toHaveLength(2)
    await expect(registry.list({ limit: 0 })).rejects.toThrow(RangeError)
    await registry.delete(endpoint.id, 'alice')
    expect((await refusal(registry.get(endpoint.id))).code).toBe('ENDPOINT_NOT_FOUND')
    expect((await refusal(registry.delete(endpoint.id))).code).toBe('ENDPOINT_NOT_FOUND')
  })
})

describe('createEndpointRegistry: status', () => {
  it('disables with a reason and enables again (the reason cleared)', async () => {
    const { registry, advance } = setup()
    const { endpoint } = await registry.create({ url: 'https://hooks.example.com/' })
    advance(5)
    const disabled = await registry.setStatus(endpoint.id, 'disabled', 'gone')
    expect(disabled).toMatchObject({
      status: 'disabled',
      disabledReason: 'gone',
      version: 2,
      updatedAt: 1_000_005,
    })
    const enabled = await registry.setStatus(endpoint.id, 'enabled', 'whatever')
    expect(enabled).toMatchObject({ status: 'enabled', disabledReason: null, version: 3 })
    await expect(registry.setStatus(endpoint.id, 'paused' as 'enabled', null)).rejects.toThrow(
      TypeError,
    )
    await expect(registry.setStatus(endpoint.id, 'disabled', 'x'.repeat(201))).rejects.toThrow(
      TypeError,
    )
  })
})

describe('createEndpointRegistry: rotation', () => {
  it('both secrets sign until the overlap ends, then only the new one', async () => {
    const { registry, advance, now } = setup()
    const created = await registry.create({ url: 'https://hooks.example.com/' })
    advance(1_000)
    const rotated = await registry.rotateSecret(created.endpoint.id)
    expect(rotated.secret).not.toBe(created.secret)
    expect(rotated.endpoint.secrets.map((s) => [s.createdAt, s.expiresAt])).toEqual([
      [1_001_000, null],
      [1_000_000, 1_061_000],
    ])
    expect(await registry.signingSecrets(rotated.endpoint, now())).toEqual([
      rotated.secret,
      created.secret,
    ])
    expect(await registry.signingSecrets(rotated.endpoint, 1_060_999)).toEqual([
      rotated.secret,
      created.secret,
    ])
    expect(await registry.signingSecrets(rotated.endpoint, 1_061_000)).toEqual([rotated.secret])
    // A rotation after the overlap drops the expired secret.
    advance(60_000)
    const again = await registry.rotateSecret(created.endpoint.id)
    expect(again.endpoint.secrets).toHaveLength(2)
    expect(await registry.signingSecrets(again.endpoint, now())).toEqual([
      again.secret,
      rotated.secret,
    ])
  })

  it('keeps at most 4 secrets; overlapMs 0 ends the old secret at once', async () => {
    const { registry, advance, now } = setup()
    const { endpoint } = await registry.create({ url: 'https://hooks.example.com/' })
    const secrets: string[] = []
    for (let i = 0; i < 6; i++) {
      advance(1)
      secrets.unshift((await registry.rotateSecret(endpoint.id)).secret)
    }
    const current = (await registry.store.get(endpoint.id))!
    expect(current.secrets).toHaveLength(4)
    expect(await registry.signingSecrets(current, now())).toEqual(secrets.slice(0, 4))
    const abrupt = await registry.rotateSecret(endpoint.id, undefined, { overlapMs: 0 })
    expect(abrupt.endpoint.secrets).toHaveLength(1)
    expect(await registry.signingSecrets(abrupt.endpoint, now())).toEqual([abrupt.secret])
    await expect(registry.rotateSecret(endpoint.id, undefined, { overlapMs: -1 })).rejects.toThrow(
      RangeError,
    )
  })
})

describe('createEndpointRegistry: compare-and-set', () => {
  it('concurrent writes of one endpoint all land (retried on a version conflict)', async () => {
    const { registry } = setup()
    const { endpoint } = await registry.create({ url: 'https://hooks.example.com/' })
    const results = await Promise.all([
      registry.rotateSecret(endpoint.id),
      registry.setStatus(endpoint.id, 'disabled', 'manual'),
      registry.rotateSecret(endpoint.id),
      registry.rotateSecret(endpoint.id),
    ])
    const final = (await registry.store.get(endpoint.id))!
    expect(final.version).toBe(5)
    expect(final.status).toBe('disabled')
    expect(final.secrets).toHaveLength(4)
    const signing = await registry.signingSecrets(final, 1_000_000)
    for (const result of results) if ('secret' in result) expect(signing).toContain(result.secret)
  })

  it('a write that keeps losing ends in ENDPOINT_CONFLICT (409), after bounded retries', async () => {
    const inner = new MemoryEndpointStore()
    let updates = 0
    const store: EndpointStore = {
      insert: (endpoint) => inner.insert(endpoint),
      get: (id) => inner.get(id),
      list: (query) => inner.list(query),
      subscribed: (type) => inner.subscribed(type),
      delete: (id) => inner.delete(id),
      async update(id, update, expectedVersion) {
        updates++
        // Another writer always gets there first.
        await inner.update(id, { updatedAt: 0 })
        return await inner.update(id, update, expectedVersion)
      },
    }
    const { registry } = setup({ store })
    const { endpoint } = await registry.create({ url: 'https://hooks.example.com/' })
    const error = await refusal(registry.setStatus(endpoint.id, 'disabled', 'manual'))
    expect(error.code).toBe('ENDPOINT_CONFLICT')
    expect(error.toProblem().status).toBe(409)
    expect(updates).toBe(8)
  })
})

describe('createEndpointRegistry: secrets sealed at rest', () => {
  const key = new Uint8Array(32).fill(7)

  it('stores AES-256-GCM sealed secrets that only this key and this endpoint open', async () => {
    const { registry, store, now } = setup({ encryptionKey: key })
    const { endpoint, secret } = await registry.create({ url: 'https://hooks.example.com/' })
    const stored = (await store.get(endpoint.id))!.secrets[0]!.value
    expect(stored.startsWith('whenc_v1.')).toBe(true)
    expect(stored).not.toContain(secret.slice(6, 20))
    expect(await registry.signingSecrets(endpoint, now())).toEqual([secret])
    // Sealed twice, the same secret gives two texts (a fresh nonce each time).
    const rotated = await registry.rotateSecret(endpoint.id)
    expect(await registry.signingSecrets(rotated.endpoint, now())).toEqual([rotated.secret, secret])

    const otherKey = createEndpointRegistry({ store, encryptionKey: new Uint8Array(32).fill(8) })
    await expect(otherKey.signingSecrets(endpoint, now())).rejects.toThrow(/does not open/)
    const noKey = createEndpointRegistry({ store })
    await expect(noKey.signingSecrets(endpoint, now())).rejects.toThrow(/no encryptionKey/)
    // Moved to another endpoint, a sealed secret does not open (the id is additional data).
    const moved = { ...endpoint, id: 'we_other' }
    await expect(registry.signingSecrets(moved, now())).rejects.toThrow(/does not open/)
    const tampered = {
      ...endpoint,
      secrets: [{ ...endpoint.secrets[0]!, value: `${stored.slice(0, -2)}AA` }],
    }
    await expect(registry.signingSecrets(tampered, now())).rejects.toThrow(/does not open/)
  })

  it('reads secrets stored before the key was set', async () => {
    const store = new MemoryEndpointStore()
    const plain = createEndpointRegistry({ store })
    const { endpoint, secret } = await plain.create({ url: 'https://hooks.example.com/' })
    const sealing = createEndpointRegistry({ store, encryptionKey: key })
    expect(await sealing.signingSecrets(endpoint, Date.now())).toEqual([secret])
  })

  it('refuses a key that is not 32 bytes', () => {
    expect(() =>
      createEndpointRegistry({
        store: new MemoryEndpointStore(),
        encryptionKey: new Uint8Array(16),
      }),
    ).toThrow(TypeError)
  })
})
