import { defineConfig } from 'tsdown'

// `index-node` and `crypto-node` are the builds the `node` export condition selects; `crypto` is the Web Crypto one.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'index-node': 'src/index.node.ts',
    crypto: 'src/crypto/web.ts',
    'crypto-node': 'src/crypto/node.ts',
  },
  format: 'esm',
  platform: 'neutral',
  dts: true,
  sourcemap: true,
})
