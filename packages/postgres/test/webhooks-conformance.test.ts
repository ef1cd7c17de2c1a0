// The webhook stores on PostgreSQL through the conformance suites of @api-blocks/webhooks
// (endpoints with CAS, the delivery queue with its racing claims, leases, replays and log, and
// the dedup store with an injected clock), on PGlite and, when DATABASE_URL is set, on a server
// pool, each backend in a schema of its own.
import {
  runDedupStoreConformance,
  runDeliveryQueueConformance,
  runEndpointStoreConformance,
} from '@api-blocks/webhooks/testing'
import { afterAll, beforeAll, describe } from 'vitest'
import { migrate } from '../src/migrations.ts'
import type { Queryable } from '../src/queryable.ts'
import { PostgresDedupStore } from '../src/webhook-dedup-store.ts'
import { PostgresDeliveryQueue } from '../src/webhook-delivery-queue.ts'
import { PostgresEndpointStore } from '../src/webhook-endpoint-store.ts'
import { backends, dropSchema, testSchema } from './databases.ts'

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`the webhooks conformance on ${backend.title}`, () => {
    const schema = testSchema()
    // A prefix of its own too: the suites' tables are nobody else's.
    const tablePrefix = 'conformance_'
    let db: Queryable
    let close: () => Promise<void>
    let now = 1_700_000_000_000

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema, tablePrefix })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    // The endpoint and dedup suites use fresh random ids: they share their tables.
    runEndpointStoreConformance(
      backend.title,
      () => new PostgresEndpointStore({ db, schema, tablePrefix }),
    )
    runDedupStoreConformance(
      backend.title,
      () => new PostgresDedupStore({ db, schema, tablePrefix, clock: () => now }),
      {
        advance: (ms) => {
          now += ms
        },
      },
    )
    // Claims see every delivery of the table: each test starts from an empty one.
    runDeliveryQueueConformance(
      backend.title,
      () => new PostgresDeliveryQueue({ db, schema, tablePrefix }),
      {
        cleanup: async (queue) => {
          await db.query(`DELETE FROM ${(queue as PostgresDeliveryQueue).table}`)
        },
      },
    )
  })
}
