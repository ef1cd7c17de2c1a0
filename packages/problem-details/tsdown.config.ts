import { defineConfig } from 'tsdown'

// `validation` is the optional entry point of the validation adapters.
export default defineConfig({
  entry: { index: 'src/index.ts', validation: 'src/validation.ts' },
  format: 'esm',
  platform: 'neutral',
  dts: true,
  sourcemap: true,
})
