import { existsSync, readdirSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

// One vitest project per package and example, so `npm test` runs everything and
// `npx vitest --project problem-details` runs one block. Sources resolve through the
// `@api-blocks/source` export condition, so tests never need a build first.
const workspaces = ['packages', 'examples'].flatMap((folder) =>
  existsSync(folder)
    ? readdirSync(folder)
        .map((name) => `${folder}/${name}`)
        .filter((dir) => existsSync(`${dir}/package.json`))
    : [],
)

export default defineConfig({
  resolve: { conditions: ['@api-blocks/source'] },
  ssr: { resolve: { conditions: ['@api-blocks/source'] } },
  test: {
    projects: [
      { extends: true, test: { name: 'docs', root: 'scripts', include: ['*.test.ts'] } },
      ...workspaces.map((dir) => ({
        extends: true,
        test: {
          // examples/express and packages/express would share a name: examples get a prefix.
          name: dir.startsWith('examples/')
            ? `example-${dir.slice(dir.indexOf('/') + 1)}`
            : dir.slice(dir.indexOf('/') + 1),
          root: dir,
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          typecheck: { enabled: true, include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'] },
        },
      })),
    ],
  },
})
