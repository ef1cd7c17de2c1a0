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
      introspection: { introspect: async (): Promise<ServerAnswer> => ({ active: false }) },
    }
    expectTypeOf(options).toExtend<BearerOptions>()
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
