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

// Vitest prints a notice for type tests ("an experimental feature … please pin Vitest's
// version"). The version is pinned exactly in package.json, which is what the notice asks, so
// it would only be noise in every run; this is the switch vitest itself reads for it.
process.env['VITEST_DISABLE_EXPERIMENTAL_LOG'] ??= 'true'

// packages/graphql: graphql-js must be ONE instance (it checks `instanceof` across modules).
// Vite resolves our sources' `graphql` to its ESM build, while Node would load the CommonJS one
// for these externalised dependencies ("Cannot use GraphQLSchema from another module or
// realm"), so they are inlined: Vite resolves their `graphql` exactly as it resolves ours.
const graphqlDependents = ['graphql-http', 'graphql-sse', 'graphql-ws', 'graphql-query-complexity']
const graphqlServer = { deps: { inline: graphqlDependents } }

export default defineConfig({
  resolve: { conditions: ['@api-blocks/source'] },
  ssr: { resolve: { conditions: ['@api-blocks/source'] } },
  test: {
    // The default reporter counts skipped tests; this one also says which and why.
    reporters: ['default', './scripts/skip-reporter.ts'],
    // One fresh module graph per test file, chosen on purpose: the node adapter's tests install
    // and restore the global Request and Response, and other tests patch globals too. (Stated
    // here, vitest stops suggesting `isolate: false` after every run.)
    isolate: true,
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
          // The examples' tests start whole services (child processes, thousands of sockets):
          // under a loaded CI machine they outgrow vitest's 5 s default though nothing hangs.
          ...(dir.startsWith('examples/') ? { testTimeout: 20_000 } : {}),
          typecheck: { enabled: true, include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'] },
          // examples/service serves /graphql with graphql-http, graphql-sse and graphql-ws too.
          ...(dir === 'packages/graphql' || dir === 'examples/service'
            ? { server: graphqlServer }
            : {}),
        },
      })),
      // The same tests of packages/graphql on graphql-js 17 (the peer range is ^16.9 || ^17):
      // every `graphql` and `graphql/…` import, ours and our dependencies', resolves to the
      // `graphql17` alias (npm:graphql@17). test/graphql-version.test.ts checks which one ran.
      {
        extends: true,
        resolve: { alias: [{ find: /^graphql(\/.*)?$/, replacement: 'graphql17$1' }] },
        test: {
          name: 'graphql-v17',
          root: 'packages/graphql',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          server: graphqlServer,
          env: { GRAPHQL_MAJOR: '17' },
        },
      },
    ],
  },
})
