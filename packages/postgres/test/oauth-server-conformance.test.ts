// The authorisation server of @api-blocks/oauth on PostgresOAuthStore, through its endpoints: the
// server conformance suite (the RFC 9700 attack table, the code flow with PKCE, code replay,
// refresh rotation and reuse, client credentials, revocation and introspection with the RFC
// vectors), on PGlite and, when DATABASE_URL is set, on a server pool.
import { runAuthorizationServerConformance } from '@api-blocks/oauth/testing'
import { afterAll, beforeAll, describe } from 'vitest'
import { migrate } from '../src/migrations.ts'
import { PostgresOAuthStore } from '../src/oauth-store.ts'
import type { Queryable } from '../src/queryable.ts'
import { backends, dropSchema, testSchema } from './databases.ts'

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(
    `the authorisation server conformance on ${backend.title}`,
    () => {
      const schema = testSchema()
      let db: Queryable
      let close: () => Promise<void>

      beforeAll(async () => {
        ;({ db, close } = await backend.open())
        await migrate(db, { schema })
      }, 30_000) // starting PGlite takes seconds on a busy machine
      afterAll(async () => {
        await dropSchema(db, schema)
        await close()
      })

      // Every test's records carry fresh random ids, so the tests share one schema.
      runAuthorizationServerConformance(backend.title, () => new PostgresOAuthStore({ db, schema }))
    },
  )
}
