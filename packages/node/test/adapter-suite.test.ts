// The default: native undici Request and Response objects and untouched globals. Its own file
// (vitest runs each file in a process of its own), so nothing else installed other globals.
import { runAdapterSuite } from '@api-blocks/adapter-suite'
import { expect, test } from 'vitest'
import { toNodeListener } from '../src/index.ts'
import { listen } from './start.ts'

const nativeRequest = globalThis.Request
const nativeResponse = globalThis.Response

runAdapterSuite('node:http', (handler) => listen(toNodeListener(handler)))

test('by default the global Request and Response stay the native classes', () => {
  expect(globalThis.Request).toBe(nativeRequest)
  expect(globalThis.Response).toBe(nativeResponse)
})
