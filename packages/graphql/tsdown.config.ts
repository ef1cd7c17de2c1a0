import { defineConfig } from 'tsdown'

export default defineConfig({
  // `ws` is the Node WebSocket server (graphql-ws over the `ws` package); `testing` is the
  // store conformance suites of the `/testing` subpath (vitest stays external, an optional peer).
  entry: { index: 'src/index.ts', ws: 'src/ws/index.ts', testing: 'src/testing/index.ts' },
  format: 'esm',
  platform: 'neutral',
  // `.js` and `.d.ts`, as package.json's exports name them (the package is `"type": "module"`).
  fixedExtension: false,
  dts: true,
  sourcemap: true,
})
