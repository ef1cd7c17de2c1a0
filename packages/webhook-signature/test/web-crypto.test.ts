// The Web Crypto build: what Workers, browsers and every runtime without the `node` export
// condition run. A child process resolves the package with the `node` condition removed
// (fixtures/without-node-condition.ts, a module resolve hook), so @api-blocks/core's export
// map hands it `src/crypto/web.ts` (crypto.subtle with cached CryptoKeys) and the portable
// base64, exactly as it would on such a runtime; the published and derived vectors must sign
// and verify there as they do on node:crypto.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { derivedVectors, publishedVectors } from './vectors.ts'

const run = promisify(execFile)
const hooks = fileURLToPath(new URL('./fixtures/without-node-condition.ts', import.meta.url))
const fixture = fileURLToPath(new URL('./fixtures/web-crypto.ts', import.meta.url))

describe('the Web Crypto build (no `node` export condition)', () => {
  test('resolves core to its Web Crypto module and passes every vector', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--conditions=@api-blocks/source', '--import', hooks, fixture],
      { timeout: 30_000 },
    )
    const { core, outcomes } = JSON.parse(stdout) as {
      core: string[]
      outcomes: Record<string, string>
    }
    expect(core).toContain('crypto/web.ts')
    expect(core).not.toContain('crypto/node.ts')
    expect(core).not.toContain('base64.node.ts')
    const expected = Object.fromEntries(
      [...publishedVectors, ...derivedVectors].map((vector) => [
        vector.name,
        'signed, verified, SIGNATURE_MISMATCH',
      ]),
    )
    expect(outcomes).toEqual(expected)
  }, 30_000)
})
