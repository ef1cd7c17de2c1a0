// graphql-http's audit suite (61 audits: 13 MUST, 23 SHOULD, 25 MAY) against the endpoint
// mounted on every adapter of the repository, each on a real server at port 0. Every audit
// must pass, MAY included: a status other than "ok" fails the test, so a regression in any
// adapter or in the endpoint shows up under the audit's own name.
import { serverAudits } from 'graphql-http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createGraphQLHandler } from '../src/index.ts'
import type { Started } from './http-fixtures.ts'
import { adapters, makeRootValue, schema } from './http-fixtures.ts'

const handler = createGraphQLHandler({ schema, rootValue: makeRootValue() })

for (const [adapter, start] of Object.entries(adapters)) {
  describe(`graphql-http audits on ${adapter}`, () => {
    let server: Started
    beforeAll(async () => {
      server = await start(handler)
    })
    afterAll(() => server.close())

    for (const audit of serverAudits({ url: () => server.url })) {
      test(`${audit.name} (${audit.id})`, async () => {
        const result = await audit.fn()
        expect(result.status, 'reason' in result ? result.reason : '').toBe('ok')
      })
    }
  })
}
