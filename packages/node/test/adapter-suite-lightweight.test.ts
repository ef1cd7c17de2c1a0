// The same behaviour on the opt-in fast path: the lazy Request and the lightweight Response.
import { runAdapterSuite } from '@api-blocks/adapter-suite'
import { expect, test } from 'vitest'
import { toNodeListener } from '../src/index.ts'
import { listen } from './start.ts'

const nativeResponse = globalThis.Response

runAdapterSuite('node:http, lightweight: true', (handler) =>
  listen(toNodeListener(handler, { lightweight: true })),
)

test('lightweight: true replaced the globals', () => {
  expect(globalThis.Response).not.toBe(nativeResponse)
  expect(new Response('x') instanceof nativeResponse).toBe(true)
})
