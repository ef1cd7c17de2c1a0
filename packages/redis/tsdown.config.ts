import { defineConfig } from 'tsdown'

export default defineConfig({
  // `graphql`: the GraphQL stores, a subpath so that users of the other stores need no graphql.
  entry: ['src/index.ts', 'src/graphql.ts'],
  format: 'esm',
  platform: 'node',
  // `.js` and `.d.ts`, as package.json's exports name them (the package is `"type": "module"`);
  // on the node platform tsdown would otherwise write `.mjs` and `.d.mts`.
  fixedExtension: false,
  dts: true,
  sourcemap: true,
})
