// GRAPHQL_PERSISTED_QUERIES, GRAPHQL_PERSISTED_MANIFEST and GRAPHQL_INTROSPECTION: parsed at
// start (invalid values stop it with a message), and allow-list mode through the running
// service: only the manifest's documents run.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ExecutionResult } from 'graphql'
import { afterAll, describe, expect, test } from 'vitest'
import { ConfigError, parseGraphQLSettings } from '../src/config.ts'
import { clientCredentialsToken } from './oauth-client.ts'
import type { ServiceProcess } from './running-service.ts'
import { startService } from './running-service.ts'

const folder = mkdtempSync(join(tmpdir(), 'graphql-config-'))
const VIEWER = '{ viewer { clientId } }'
const sha256 = async (text: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex')

async function manifestFile(): Promise<string> {
  const path = join(folder, 'persisted-query-manifest.json')
  writeFileSync(
    path,
    JSON.stringify({
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: await sha256(VIEWER), body: VIEWER, name: 'Viewer', type: 'query' }],
    }),
  )
  return path
}

describe('parseGraphQLSettings', () => {
  test('defaults: APQ, introspection on, off when NODE_ENV is production', () => {
    expect(parseGraphQLSettings({})).toEqual({
      persistedQueries: 'apq',
      manifest: undefined,
      introspection: true,
    })
    expect(parseGraphQLSettings({ NODE_ENV: 'production' }).introspection).toBe(false)
    expect(
      parseGraphQLSettings({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).introspection,
    ).toBe(true)
    expect(parseGraphQLSettings({ GRAPHQL_PERSISTED_QUERIES: 'off' }).persistedQueries).toBe(false)
  })

  test('a manifest is read and parsed; allow-list requires one', async () => {
    const path = await manifestFile()
    const settings = parseGraphQLSettings({
      GRAPHQL_PERSISTED_QUERIES: 'allow-list',
      GRAPHQL_PERSISTED_MANIFEST: path,
    })
    expect(settings.persistedQueries).toBe('allow-list')
    expect(settings.manifest).toMatchObject({ format: 'apollo-persisted-query-manifest' })
    const notJson = join(folder, 'not.json')
    writeFileSync(notJson, '{')
    const cases: [Record<string, string>, RegExp][] = [
      [{ GRAPHQL_PERSISTED_QUERIES: 'yes' }, /must be apq, allow-list or off/],
      [{ GRAPHQL_INTROSPECTION: '1' }, /must be true or false/],
      [{ GRAPHQL_PERSISTED_QUERIES: 'allow-list' }, /must name the manifest/],
      [{ GRAPHQL_PERSISTED_MANIFEST: join(folder, 'none.json') }, /cannot read/],
      [{ GRAPHQL_PERSISTED_MANIFEST: notJson }, /not valid JSON/],
    ]
    for (const [env, message] of cases) {
      expect(() => parseGraphQLSettings(env), JSON.stringify(env)).toThrow(ConfigError)
      expect(() => parseGraphQLSettings(env)).toThrow(message)
    }
  })
})

describe('allow-list mode through the running service', () => {
  let service: ServiceProcess | undefined
  afterAll(() => service?.stop())

  test('the manifest documents run by id (APQ hash or documentId); any other document is PERSISTED_QUERY_ONLY', async () => {
    service = await startService({
      GRAPHQL_PERSISTED_QUERIES: 'allow-list',
      GRAPHQL_PERSISTED_MANIFEST: await manifestFile(),
      GRAPHQL_INTROSPECTION: 'false',
    })
    const token = await clientCredentialsToken(fetch, service.base, 'read:orders')
    const send = async (body: unknown) => {
      const response = await fetch(`${service?.base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return (await response.json()) as ExecutionResult
    }
    const hash = await sha256(VIEWER)
    const viewer = { viewer: { clientId: 'demo-backend' } }
    expect(
      (await send({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).data,
    ).toEqual(viewer)
    expect((await send({ documentId: `sha256:${hash}` })).data).toEqual(viewer)
    // The same text sent in full, another document, an unknown id: refused, nothing registered.
    for (const body of [
      { query: VIEWER },
      { query: '{ orders { edges { node { id } } } }' },
      { documentId: `sha256:${'0'.repeat(64)}` },
    ]) {
      const refused = await send(body)
      expect(
        refused.errors?.map((error) => error.extensions?.['code']),
        JSON.stringify(body),
      ).toEqual(['PERSISTED_QUERY_ONLY'])
    }
  })

  test('a manifest whose id is not the hash of its document stops the start', async () => {
    const path = join(folder, 'wrong.json')
    writeFileSync(path, JSON.stringify({ [`sha256:${'0'.repeat(64)}`]: VIEWER }))
    await expect(
      startService({ GRAPHQL_PERSISTED_QUERIES: 'allow-list', GRAPHQL_PERSISTED_MANIFEST: path }),
    ).rejects.toThrow(/Invalid configuration: GRAPHQL_PERSISTED_MANIFEST: .*not the sha256/)
  })
})
