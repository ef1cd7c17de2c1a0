import { defineConfig } from 'tsdown'

// One entry per subpath export; `compress-node` is the build the `node` condition selects, and
// the node: modules it imports stay imports.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    headers: 'src/headers/index.ts',
    'request-id': 'src/request-id/index.ts',
    negotiate: 'src/negotiate/index.ts',
    cors: 'src/cors/index.ts',
    methods: 'src/methods/index.ts',
    body: 'src/body/index.ts',
    compress: 'src/compress/index.ts',
    'compress-node': 'src/compress/node.ts',
    version: 'src/version/index.ts',
    limits: 'src/limits/index.ts',
    'structured-fields': 'src/structured-fields/index.ts',
  },
  format: 'esm',
  platform: 'neutral',
  deps: { neverBundle: [/^node:/] },
  dts: true,
  sourcemap: true,
})
