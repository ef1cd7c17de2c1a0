// Type tests of the network half of the public surface: the guard, the sender, the safe
// fetch, the receiver and the freshness tracker.
import { lookup } from 'node:dns'
import type { Dispatcher } from 'undici'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  AttemptResult,
  DnsLookup,
  Freshness,
  SafeFetch,
  SsrfGuard,
  WebhookContext,
  WebhookEvent,
} from './index.ts'
import {
  createFreshnessTracker,
  createSafeFetch,
  createSsrfGuard,
  createWebhookReceiver,
  createWebhookSender,
  isRefusedAddress,
} from './index.ts'

describe('network types', () => {
  test('the guard takes node:dns lookup and gives an undici dispatcher', () => {
    expectTypeOf(lookup).toExtend<DnsLookup>()
    const guard = createSsrfGuard({ lookup, allowedOrigins: ['http://127.0.0.1:4000'] })
    expectTypeOf(guard).toEqualTypeOf<SsrfGuard>()
    expectTypeOf(guard.dispatcher).toExtend<Dispatcher>()
    expectTypeOf(guard.checkUrl).returns.resolves.toEqualTypeOf<URL>()
    expectTypeOf(isRefusedAddress).returns.toEqualTypeOf<boolean>()
  })

  test('the sender resolves with an AttemptResult; the payload is text', () => {
    const sender = createWebhookSender()
    expectTypeOf(sender.send).returns.resolves.toEqualTypeOf<AttemptResult>()
    // @ts-expect-error: the payload is the serialised event, not the event
    sender.send({ url: 'https://a.example', eventId: 'evt_1', payload: {}, secrets: [] })
  })

  test('the safe fetch is GET or HEAD and gives a Response', () => {
    const safeFetch = createSafeFetch()
    expectTypeOf(safeFetch).toEqualTypeOf<SafeFetch>()
    expectTypeOf(safeFetch).returns.resolves.toEqualTypeOf<Response>()
    // @ts-expect-error: GET or HEAD only
    safeFetch('https://a.example', { method: 'POST' })
  })

  test('the receiver is a Fetch handler; the handler gets the event and its context', () => {
    const receiver = createWebhookReceiver({
      secrets: 'whsec_a',
      handler: (event, context) => {
        expectTypeOf(event).toEqualTypeOf<WebhookEvent>()
        expectTypeOf(context).toEqualTypeOf<WebhookContext>()
      },
    })
    expectTypeOf(receiver.handle).toEqualTypeOf<(request: Request) => Promise<Response>>()
    // @ts-expect-error: a handler is needed
    createWebhookReceiver({ secrets: 'whsec_a' })
  })

  test('the tracker says fresh, stale or same', () => {
    expectTypeOf(createFreshnessTracker().observe).returns.toEqualTypeOf<Freshness>()
    expectTypeOf<Freshness>().toEqualTypeOf<'fresh' | 'stale' | 'same'>()
  })
})
