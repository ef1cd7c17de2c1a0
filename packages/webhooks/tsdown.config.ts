import { defineConfig } from 'tsdown'

export default defineConfig({
  // `testing` is the store conformance suites of the `/testing` subpath; vitest stays external
  // (an optional peer dependency).
  entry: { index: 'src/index.ts', testing: 'src/testing/index.ts' },
  format: 'esm',
  platform: 'node',
  // `.js` and `.d.ts`, as package.json's exports name them (the package is `"type": "module"`).
  fixedExtension: false,
  dts: true,
  sourcemap: true,
})
