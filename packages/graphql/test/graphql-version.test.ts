// Which graphql-js the tests run on: 16 in the `graphql` project, 17 in `graphql-v17`
// (vitest.config.ts aliases `graphql` to the `graphql17` package there), and one instance
// shared with graphql-http and graphql-sse (a second copy would fail every schema check).
import { buildSchema, versionInfo } from 'graphql'
import { expect, test } from 'vitest'
import { createGraphQLHandler } from '../src/index.ts'

test('the graphql-js major version is the one this project runs', () => {
  expect(versionInfo.major).toBe(process.env['GRAPHQL_MAJOR'] === '17' ? 17 : 16)
})

test('graphql-http executes with the same graphql-js instance as ours', async () => {
  const handler = createGraphQLHandler({
    schema: buildSchema('type Query { major: Int }'),
    rootValue: { major: versionInfo.major },
  })
  const response = await handler(new Request('http://localhost/graphql?query={major}'))
  expect(response.status).toBe(200)
  expect(await response.json()).toMatchObject({ data: { major: versionInfo.major } })
})
