// The authorisation server of @api-blocks/oauth on RedisOAuthStore, through its endpoints: the
// server conformance suite (the RFC 9700 attack table, the code flow with PKCE, code replay,
// refresh rotation and reuse, client credentials, revocation and introspection with the RFC
// vectors). Skipped, with the reason in its title, without REDIS_URL.
import { runAuthorizationServerConformance } from '@api-blocks/oauth/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe } from 'vitest'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import { RedisOAuthStore } from './oauth-store.ts'

describe.skipIf(redisUrl === undefined)(serverSuite('the authorisation server on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(() => {
    client.destroy()
  })

  runAuthorizationServerConformance(
    'RedisOAuthStore',
    () => new RedisOAuthStore({ client, prefix: testPrefix('oauth-server') }),
    {
      cleanup: async (store) => {
        await deletePrefix(client, (store as RedisOAuthStore).prefix)
      },
    },
  )
})
