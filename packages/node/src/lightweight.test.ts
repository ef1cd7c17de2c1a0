import { afterEach, expect, test } from 'vitest'
import { FastResponse } from './internal/fast-response.ts'
import { NativeRequest, NativeResponse } from './internal/native.ts'
import {
  FastRequest,
  installLightweightGlobals,
  lightweightGlobalsInstalled,
  restoreNativeGlobals,
} from './lightweight.ts'

afterEach(() => restoreNativeGlobals())

test('nothing is installed on import', () => {
  expect(globalThis.Response).toBe(NativeResponse)
  expect(globalThis.Request).toBe(NativeRequest)
  expect(lightweightGlobalsInstalled()).toBe(false)
})

test('installs once, keeps the global property flags, and restores', () => {
  const before = Object.getOwnPropertyDescriptor(globalThis, 'Response')!
  expect(installLightweightGlobals()).toBe(true)
  expect(installLightweightGlobals()).toBe(true)
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
  const restored = Object.getOwnPropertyDescriptor(globalThis, 'Response')!
  expect([restored.writable, restored.enumerable, restored.configurable]).toEqual([
    before.writable,
    before.enumerable,
    before.configurable,
  ])
})

test('leaves globals another library replaced alone, before and after installation', () => {
  const foreign = class extends NativeResponse {} as typeof Response
  globalThis.Response = foreign
  try {
    expect(installLightweightGlobals()).toBe(false)
    expect(globalThis.Response).toBe(foreign)
    expect(globalThis.Request).toBe(NativeRequest)
    restoreNativeGlobals()
    expect(globalThis.Response).toBe(foreign)
  } finally {
    globalThis.Response = NativeResponse
  }
  // Installed first, then replaced by someone else: restoring touches only what is still ours.
  installLightweightGlobals()
  globalThis.Response = foreign
  try {
    expect(lightweightGlobalsInstalled()).toBe(false)
    restoreNativeGlobals()
    expect(globalThis.Request).toBe(NativeRequest)
    expect(globalThis.Response).toBe(foreign)
  } finally {
    globalThis.Response = NativeResponse
  }
})

test('after installation, fetch results still count as Responses', async () => {
  installLightweightGlobals()
  const result = await fetch('data:text/plain,hi')
  expect(result instanceof Response).toBe(true)
  expect(new Response('x') instanceof Response).toBe(true)
  expect(new Request('http://x/') instanceof Request).toBe(true)
  expect(new NativeRequest('http://x/') instanceof Request).toBe(true)
})
