// A Worker that answers one 404 problem must stay small, and must not bundle a schema library:
// the catalog's extension schemas are the package's own (issue 12 item 4: it was 96 KB minified
// with zod; the target is under 15 KB). Bundled from the sources, as an application bundler
// would bundle the published files, with rolldown (the bundler under tsdown), minified.
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'
import { expect, test } from 'vitest'

const TARGET_BYTES = 15 * 1024

test('a Worker answering one 404 problem bundles under 15 KB minified, without zod', async () => {
  const bundle = await rolldown({
    input: fileURLToPath(new URL('./fixtures/worker-404.ts', import.meta.url)),
    platform: 'browser',
    resolve: { conditionNames: ['@api-blocks/source', 'import', 'default'] },
    logLevel: 'silent',
  })
  const { output } = await bundle.generate({ format: 'esm', minify: true })
  await bundle.close()
  expect(output).toHaveLength(1)
  const [chunk] = output
  const modules = chunk.moduleIds
  // The bundle really holds the catalog and the serialiser (the measurement means something).
  expect(modules.some((id) => id.endsWith('problem-details/src/catalog.ts'))).toBe(true)
  expect(modules.some((id) => id.endsWith('problem-details/src/response.ts'))).toBe(true)
  expect(modules.filter((id) => /[\\/]zod[\\/]/.test(id))).toEqual([])
  expect(chunk.code).not.toMatch(/zod/i)
  const bytes = new TextEncoder().encode(chunk.code).byteLength
  // 11.2 KB when this test was written.
  expect(bytes, `${bytes} bytes minified`).toBeLessThan(TARGET_BYTES)
})
