import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { BASIC_EXAMPLES } from '../test/vectors/rfc-client-auth.ts'
import { authenticateClient, basicCredentials } from './client-auth.ts'
import { hashClientSecret, staticClients } from './clients.ts'
import { parseUrlEncoded } from './form.ts'

describe('basicCredentials', () => {
  test.each(BASIC_EXAMPLES)('$source: $id / $secret', ({ header, id, secret }) => {
    expect(basicCredentials(header)).toEqual({ id, secret })
  })

  test('id and secret MUST be form-url-decoded (RFC 6749 §2.3.1), as oauth4webapi encodes them', () => {
    // "my client:1" / "p@ss word+%" form-encoded, then base64.
    const header = `Basic ${btoa('my+client%3A1:p%40ss+word%2B%25')}`
    expect(basicCredentials(header)).toEqual({ id: 'my client:1', secret: 'p@ss word+%' })
  })

  test('property: whatever the id and secret, encoded as RFC 6749 §2.3.1 says, they decode back', () => {
    const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+')
    const utf8Base64 = (text: string) =>
      btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: 'grapheme' }),
        fc.string({ unit: 'grapheme' }),
        (id, secret) => {
          const header = `Basic ${utf8Base64(`${encode(id)}:${encode(secret)}`)}`
          expect(basicCredentials(header)).toEqual({ id, secret })
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          basicCredentials(text)
        } catch (error) {
          expect(error).toMatchObject({ error: 'invalid_client' })
        }
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('property: raw UTF-8 beyond ASCII, padded or not, decodes as UTF-8 (RFC 7617 §2.1)', () => {
    const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: 'grapheme' }).filter((id) => !/[:%+]/.test(id)),
        fc.string({ unit: 'grapheme' }).filter((secret) => !/[%+]/.test(secret)),
        fc.boolean(),
        (id, secret, padded) => {
          const encoded = base64(new TextEncoder().encode(`${id}:${secret}`))
          const header = `Basic ${padded ? encoded : encoded.replace(/=+$/, '')}`
          expect(basicCredentials(header)).toEqual({ id, secret })
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test.each([
    ['bytes that are not UTF-8', `Basic ${btoa('\xff\xfe:\xc3')}`],
    ['a length of 4n + 1 characters', 'Basic YTpiY'],
    ['padding in the middle', 'Basic YQ==YQ=='],
    ['three padding characters', 'Basic YQ==='],
  ])('refuses %s as invalid_client', (_name, header) => {
    expect(() => basicCredentials(header)).toThrow(
      expect.objectContaining({ error: 'invalid_client', status: 401 }),
    )
  })

  test('the scheme is case-insensitive (RFC 7617 §2)', () => {
    expect(basicCredentials(`bAsIc ${btoa('a:b')}`)).toEqual({ id: 'a', secret: 'b' })
  })

  test('split at the first colon: the secret may hold colons', () => {
    expect(basicCredentials(`Basic ${btoa('a:b:c')}`)).toEqual({ id: 'a', secret: 'b:c' })
  })

  test('another scheme is not Basic', () => {
    expect(basicCredentials('Bearer abc')).toBeUndefined()
  })

  test.each([
    ['no credentials', 'Basic'],
    ['not base64', 'Basic ***'],
    ['no colon', `Basic ${btoa('abc')}`],
    ['an empty id', `Basic ${btoa(':secret')}`],
    ['a bad percent escape', `Basic ${btoa('a%zz:b')}`],
    ['bad UTF-8', `Basic ${btoa('\xff:b')}`],
  ])('%s: invalid_client', (_name, header) => {
    expect(() => basicCredentials(header)).toThrow(
      expect.objectContaining({ error: 'invalid_client', status: 401 }),
    )
  })
})

describe('authenticateClient', async () => {
  const registry = staticClients([
    {
      id: 'backend',
      secretHashes: [await hashClientSecret('old-secret'), await hashClientSecret('new-secret')],
      grantTypes: ['client_credentials'],
      scopes: ['read:orders'],
    },
    {
      id: 'spa',
      public: true,
      redirectUris: ['https://spa.example.com/cb'],
      grantTypes: ['authorization_code'],
      scopes: ['read:orders'],
    },
  ])
  const failures: (string | undefined)[] = []
  const run = (form: string, headers: Record<string, string> = {}, allowPublic = true) =>
    authenticateClient(
      new Request('https://as.example.com/token', { method: 'POST', headers }),
      parseUrlEncoded(form)!,
      registry,
      { allowPublic, onFailure: (id) => failures.push(id) },
    )

  test('client_secret_basic, with either of two secrets (rotation)', async () => {
    for (const secret of ['old-secret', 'new-secret']) {
      const result = await run('', { authorization: `Basic ${btoa(`backend:${secret}`)}` })
      expect(result.method).toBe('client_secret_basic')
      expect(result.client.id).toBe('backend')
    }
  })

  test('client_secret_post', async () => {
    const result = await run('client_id=backend&client_secret=new-secret')
    expect(result.method).toBe('client_secret_post')
  })

  test('none, for a public client', async () => {
    const result = await run('client_id=spa')
    expect(result).toMatchObject({ method: 'none', client: { id: 'spa' } })
  })

  test('Basic with the same client_id in the body is accepted', async () => {
    const result = await run('client_id=backend', {
      authorization: `Basic ${btoa('backend:new-secret')}`,
    })
    expect(result.client.id).toBe('backend')
  })

  test.each([
    ['a wrong secret (basic)', '', { authorization: `Basic ${btoa('backend:wrong')}` }, 'backend'],
    ['a wrong secret (post)', 'client_id=backend&client_secret=wrong', {}, 'backend'],
    ['no secret for a confidential client', 'client_id=backend', {}, 'backend'],
    ['an unknown client', 'client_id=nobody', {}, 'nobody'],
    ['a secret for a public client', 'client_id=spa&client_secret=x', {}, 'spa'],
    ['no client at all', '', {}, undefined],
    ['another scheme', 'client_id=backend', { authorization: 'Bearer abc' }, undefined],
  ])('%s MUST be refused with invalid_client', async (_name, form, headers, failedId) => {
    failures.length = 0
    await expect(run(form, headers)).rejects.toMatchObject({ error: 'invalid_client', status: 401 })
    expect(failures).toEqual([failedId])
  })

  test('a public client where authentication is required: invalid_client', async () => {
    await expect(run('client_id=spa', {}, false)).rejects.toMatchObject({ error: 'invalid_client' })
  })

  test('two methods at once MUST be refused with invalid_request (RFC 6749 §2.3)', async () => {
    await expect(
      run('client_secret=new-secret', { authorization: `Basic ${btoa('backend:new-secret')}` }),
    ).rejects.toMatchObject({ error: 'invalid_request' })
  })

  test('a body client_id that differs from Basic is refused', async () => {
    await expect(
      run('client_id=spa', { authorization: `Basic ${btoa('backend:new-secret')}` }),
    ).rejects.toMatchObject({ error: 'invalid_request' })
  })
})

describe('a confidential client whose secrets were all removed', () => {
  // The host's registry, unchecked: what a database row with an emptied secret list gives.
  const registry = {
    findClient: async (id: string) =>
      id === 'retired'
        ? {
            id: 'retired',
            secretHashes: [],
            grantTypes: ['authorization_code' as const],
            redirectUris: ['https://retired.example.com/cb'],
            scopes: ['read:orders'],
          }
        : undefined,
  }
  const run = (form: string) =>
    authenticateClient(
      new Request('https://as.example.com/token', { method: 'POST' }),
      parseUrlEncoded(form)!,
      registry,
      { allowPublic: true, onFailure: () => {} },
    )

  test('MUST NOT authenticate with its client_id alone (it is not public)', async () => {
    await expect(run('client_id=retired')).rejects.toMatchObject({ error: 'invalid_client' })
  })

  test('can never authenticate, whatever secret it sends', async () => {
    await expect(run('client_id=retired&client_secret=')).rejects.toMatchObject({
      error: 'invalid_client',
    })
    await expect(run('client_id=retired&client_secret=anything')).rejects.toMatchObject({
      error: 'invalid_client',
    })
  })
})

describe("a registry that changes a client's secret list in place", () => {
  test('a removed secret stops working and an added one works, at once', async () => {
    const secretHashes = [await hashClientSecret('leaked-secret')]
    const client = {
      id: 'rotating',
      secretHashes,
      grantTypes: ['client_credentials'] as const,
      scopes: [],
    }
    const registry = { findClient: async (id: string) => (id === 'rotating' ? client : undefined) }
    const run = (secret: string) =>
      authenticateClient(
        new Request('https://as.example.com/token', {
          method: 'POST',
          headers: { authorization: `Basic ${btoa(`rotating:${secret}`)}` },
        }),
        parseUrlEncoded('')!,
        registry,
        { allowPublic: false, onFailure: () => undefined },
      )
    await expect(run('leaked-secret')).resolves.toMatchObject({ method: 'client_secret_basic' })
    secretHashes[0] = await hashClientSecret('fresh-secret')
    await expect(run('leaked-secret')).rejects.toMatchObject({ error: 'invalid_client' })
    await expect(run('fresh-secret')).resolves.toMatchObject({ method: 'client_secret_basic' })
    secretHashes.push(await hashClientSecret('second-secret'))
    await expect(run('second-secret')).resolves.toMatchObject({ method: 'client_secret_basic' })
  })
})
