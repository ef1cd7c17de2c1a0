import { defineConfig } from 'tsdown'

export default defineConfig({
  // `testing` is the store conformance suite of the `/testing` subpath; vitest stays external
  // (an optional peer dependency).
  entry: { index: 'src/index.ts', testing: 'src/testing/index.ts' },
  format: 'esm',
  platform: 'neutral',
  dts: true,
  sourcemap: true,
})
