import { defineConfig } from 'tsdown'

// `crypto-node` is the build the `node` export condition selects; `crypto` is the Web Crypto one.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    crypto: 'src/crypto/web.ts',
    'crypto-node': 'src/crypto/node.ts',
  },
  format: 'esm',
  platform: 'neutral',
  dts: true,
  sourcemap: true,
})
