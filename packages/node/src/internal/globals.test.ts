import { afterEach, expect, test } from 'vitest'
import { FastResponse, NativeResponse } from './fast-response.ts'
import { FastRequest, installFastGlobals, restoreNativeGlobals } from './globals.ts'
import { NativeRequest } from './incoming-request.ts'

afterEach(() => restoreNativeGlobals())

test('installs once and keeps the global property flags', () => {
  const before = Object.getOwnPropertyDescriptor(globalThis, 'Response')!
  expect(installFastGlobals()).toBe(true)
  expect(installFastGlobals()).toBe(true)
  expect(globalThis.Response).toBe(FastResponse)
  expect(globalThis.Request).toBe(FastRequest)
  const after = Object.getOwnPropertyDescriptor(globalThis, 'Response')!
  expect([after.writable, after.enumerable, after.configurable]).toEqual([
    before.writable,
    before.enumerable,
    before.configurable,
  ])
  expect(Response.name).toBe('Response')
  restoreNativeGlobals()
  expect(globalThis.Response).toBe(NativeResponse)
  expect(globalThis.Request).toBe(NativeRequest)
})

test('leaves globals another library replaced alone', () => {
  const foreign = class extends NativeResponse {}
  globalThis.Response = foreign
  try {
    expect(installFastGlobals()).toBe(false)
    expect(globalThis.Response).toBe(foreign)
  } finally {
    globalThis.Response = NativeResponse
  }
})

test('after installation, fetch results still count as Responses', async () => {
  installFastGlobals()
  const result = await fetch('data:text/plain,hi')
  expect(result instanceof Response).toBe(true)
  expect(new Response('x') instanceof Response).toBe(true)
  expect(new Request('http://x/') instanceof Request).toBe(true)
  expect(new NativeRequest('http://x/') instanceof Request).toBe(true)
})
