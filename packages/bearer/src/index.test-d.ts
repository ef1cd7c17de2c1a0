import type { Middleware, Principal } from '@api-blocks/core'
import { describe, expectTypeOf, it } from 'vitest'
import type {
  BearerErrorCode,
  BearerOptions,
  IntrospectionResponse,
  JsonWebKeyLike,
} from './index.ts'
import { BearerError, bearer, createTokenVerifier, requireScopes } from './index.ts'

describe('public types', () => {
  it('bearer() and requireScopes() are core middleware; a verifier answers a Principal', () => {
    expectTypeOf(bearer).returns.toEqualTypeOf<Middleware>()
    expectTypeOf(requireScopes).returns.toEqualTypeOf<Middleware>()
    expectTypeOf(createTokenVerifier)
      .returns.toHaveProperty('verify')
      .returns.resolves.toEqualTypeOf<Principal>()
  })

  it('BearerError codes are the closed union', () => {
    expectTypeOf<BearerError['code']>().toEqualTypeOf<BearerErrorCode>()
    // @ts-expect-error not a code of this package
    new BearerError('NOT_FOUND', 'x')
  })

  it("takes jose's JWK and an in-process introspect function of the authorisation server", () => {
    expectTypeOf<import('jose').JWK>().toExtend<JsonWebKeyLike>()
    type ServerAnswer =
      | { active: false }
      | {
          active: true
          scope: string
          client_id: string
          sub: string
          aud: string
          iss: string
          exp: number
          iat: number
          token_type: 'Bearer'
          jti: string
          username?: string
        }
    expectTypeOf<ServerAnswer>().toExtend<IntrospectionResponse>()
    const options: BearerOptions = {
      introspection: {
        introspect: async (): Promise<ServerAnswer> => ({ active: false }),
        audience: 'https://api.example.com',
      },
    }
    expectTypeOf(options).toExtend<BearerOptions>()
  })

  it('requires an audience for introspection (false to opt out) and a known typ', () => {
    // @ts-expect-error audience is required
    const none: BearerOptions['introspection'] = { introspect: async () => ({ active: false }) }
    const any: BearerOptions['introspection'] = {
      introspect: async () => ({ active: false }),
      audience: false,
    }
    // @ts-expect-error typ is at+jwt or application/at+jwt
    const typ: BearerOptions['jwt'] = { issuer: 'i', audience: 'a', keys: [], typ: 'JWT' }
    expectTypeOf([none, any, typ]).toBeArray()
  })

  it('refuses options of the wrong shape', () => {
    const jwt: BearerOptions['jwt'] = {
      issuer: 'i',
      audience: 'a',
      // @ts-expect-error algorithms is a list
      algorithms: 'ES256',
    }
    expectTypeOf(jwt).toExtend<BearerOptions['jwt']>()
  })
})
