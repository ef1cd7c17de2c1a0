// The same behaviour with `lightweight: false`: native undici Request and Response objects
// and untouched globals. Its own file, so no other test has installed the lightweight ones.
import { runAdapterSuite } from '@api-blocks/adapter-suite'
import { expect, test } from 'vitest'
import { toNodeListener } from '../src/index.ts'
import { listen } from './start.ts'

runAdapterSuite('node:http, native Fetch objects', (handler) =>
  listen(toNodeListener(handler, { lightweight: false })),
)

test('lightweight: false leaves the global Request and Response alone', () => {
  expect(Symbol.for('api-blocks.node.native') in Response).toBe(false)
  expect(Symbol.for('api-blocks.node.native') in Request).toBe(false)
})
