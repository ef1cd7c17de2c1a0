/**
 * The conformance suite of {@link PubSub}: every pub/sub (memory, Redis, yours) registers it in
 * its own test file and must pass it unchanged. It checks the contract of `pubsub/pubsub.ts` as
 * subscriptions rely on it: a subscriber gets what is published after `subscribe` resolved, in
 * publish order per publisher, JSON payloads round-trip, every subscriber of a topic gets every
 * payload and subscribers of other topics none, a subscription ends by its signal or by
 * `return()` (a waiting `next()` then answers done) and the topic still works for the others and
 * for the next subscriber, 50 concurrent subscribers each see everything, and (given the
 * implementation's `bufferSize`) a subscriber that does not read keeps the newest `bufferSize`
 * payloads.
 *
 * No test waits for time to pass: a test that finishes is a pass, one that hangs fails by its
 * timeout. No test leaves more than 10 payloads unread by a subscriber (but the `bufferSize`
 * case), so the pub/sub under test must buffer at least 10. Every test uses fresh random topics, so the suite can run against a shared server.
 *
 * @module
 */
import { describe, expect } from 'vitest'
import type { PubSub } from '../pubsub/pubsub.ts'
import type { CommonOptions } from './shared.ts'
import { AWKWARD, promised, registrar } from './shared.ts'

/**
 * Options of {@link runPubSubConformance}.
 *
 * @example
 * ```ts
 * const options: PubSubConformanceOptions = { bufferSize: 100 }
 * ```
 */
export interface PubSubConformanceOptions extends CommonOptions<PubSub> {
  /**
   * The per-subscriber buffer of the pub/sub under test: when given, a subscriber that reads
   * nothing while `bufferSize + 5` payloads are published must then read the newest
   * `bufferSize` of them, in order.
   */
  readonly bufferSize?: number
}

type Iterator = AsyncIterableIterator<unknown>

/** The next `n` payloads of `iterator` (each `next()` awaited in turn). */
async function take(iterator: Iterator, n: number): Promise<unknown[]> {
  const values: unknown[] = []
  for (let i = 0; i < n; i++) {
    const result = await iterator.next()
    expect(result.done).toBe(false)
    values.push(result.value)
  }
  return values
}

const DONE = { done: true, value: undefined }

/**
 * Registers the conformance tests of a {@link PubSub} with vitest (an optional peer dependency
 * of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makePubSub gives a ready pub/sub for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryPubSub } from '@api-blocks/graphql'
 * import { runPubSubConformance } from '@api-blocks/graphql/testing'
 *
 * runPubSubConformance('memory', () => new MemoryPubSub({ bufferSize: 20 }), { bufferSize: 20 })
 * ```
 */
export function runPubSubConformance(
  name: string,
  makePubSub: () => PubSub | Promise<PubSub>,
  options: PubSubConformanceOptions = {},
): void {
  const { bufferSize } = options
  if (bufferSize !== undefined && (!Number.isSafeInteger(bufferSize) || bufferSize < 10)) {
    throw new RangeError('runPubSubConformance: bufferSize must be an integer >= 10')
  }
  const { it, concurrency } = registrar('runPubSubConformance', makePubSub, options)

  describe(`PubSub conformance: ${name}`, () => {
    it('publish and subscribe MUST return Promises, and the iterator MUST be async-iterable', async (pubsub, run) => {
      const iterator = await promised(pubsub.subscribe(`${run}:topic`))
      expect(iterator[Symbol.asyncIterator]()).toBe(iterator)
      expect(await promised(pubsub.publish(`${run}:topic`, 1))).toBeUndefined()
      expect(await take(iterator, 1)).toEqual([1])
      expect(await iterator.return?.()).toEqual(DONE)
    })

    it('a subscriber MUST get what is published after subscribe resolved, in order, and nothing before', async (pubsub, run) => {
      const topic = `${run}:orders`
      await pubsub.publish(topic, 'before')
      const iterator = await pubsub.subscribe(topic)
      for (let i = 0; i < 10; i++) await pubsub.publish(topic, i)
      expect(await take(iterator, 10)).toEqual(Array.from({ length: 10 }, (_, i) => i))
      await iterator.return?.()
    })

    it('JSON payloads MUST round-trip: objects, arrays, strings, numbers, booleans, null', async (pubsub, run) => {
      const payloads: unknown[] = [
        { id: 'ord_1', total: 12.5, items: [{ sku: 'A-1', quantity: 2 }], paid: false, note: null },
        [1, -2, 0, 3.25, 1e21, Number.MAX_SAFE_INTEGER],
        AWKWARD,
        '',
        0,
        true,
        null,
        { nested: { deeper: { deepest: [[], {}, [null]] } }, 'key with "quotes"': AWKWARD },
        { big: 'x'.repeat(64 * 1024) },
      ]
      const iterator = await pubsub.subscribe(`${run}:payloads`)
      for (const payload of payloads) await pubsub.publish(`${run}:payloads`, payload)
      expect(await take(iterator, payloads.length)).toEqual(payloads)
      await iterator.return?.()
    })

    it('every subscriber of a topic MUST get every payload; other topics (case, prefixes) none', async (pubsub, run) => {
      const topic = `${run}:order.changed`
      const same = await Promise.all([1, 2, 3].map(() => pubsub.subscribe(topic)))
      const others = await Promise.all(
        [topic.toUpperCase(), `${topic}:x`, `${run}:order`, `${topic} `].map((t) =>
          pubsub.subscribe(t),
        ),
      )
      await pubsub.publish(topic, 'a')
      await pubsub.publish(topic, 'b')
      // A marker on each other topic: it must be the first (and only) thing they see.
      for (const [i, t] of [
        topic.toUpperCase(),
        `${topic}:x`,
        `${run}:order`,
        `${topic} `,
      ].entries()) {
        await pubsub.publish(t, `marker ${i}`)
      }
      for (const iterator of same) expect(await take(iterator, 2)).toEqual(['a', 'b'])
      for (const [i, iterator] of others.entries()) {
        expect(await take(iterator, 1)).toEqual([`marker ${i}`])
      }
      await Promise.all([...same, ...others].map((iterator) => iterator.return?.()))
    })

    it('an aborted signal MUST end the subscription: a waiting next() answers done; the others go on', async (pubsub, run) => {
      const topic = `${run}:abort`
      const controller = new AbortController()
      const ended = await pubsub.subscribe(topic, { signal: controller.signal })
      const other = await pubsub.subscribe(topic)
      await pubsub.publish(topic, 1)
      expect(await take(ended, 1)).toEqual([1])
      const waiting = ended.next()
      controller.abort()
      expect(await waiting).toEqual(DONE)
      await pubsub.publish(topic, 2)
      expect(await ended.next()).toEqual(DONE)
      expect(await take(other, 2)).toEqual([1, 2])
      await other.return?.()
    })

    it('return() MUST end the subscription: waiting and later next() answer done; the others go on', async (pubsub, run) => {
      const topic = `${run}:return`
      const ended = await pubsub.subscribe(topic)
      const other = await pubsub.subscribe(topic)
      const waiting = ended.next()
      expect(await ended.return?.()).toEqual(DONE)
      expect(await waiting).toEqual(DONE)
      await pubsub.publish(topic, 1)
      expect(await ended.next()).toEqual(DONE)
      expect(await take(other, 1)).toEqual([1])
      expect(await other.return?.()).toEqual(DONE)
      expect(await other.return?.()).toEqual(DONE)
    })

    it('a signal aborted before subscribe MUST give an iterator that is done', async (pubsub, run) => {
      const iterator = await pubsub.subscribe(`${run}:aborted`, { signal: AbortSignal.abort() })
      await pubsub.publish(`${run}:aborted`, 1)
      expect(await iterator.next()).toEqual(DONE)
    })

    it('a topic whose subscribers all left MUST work again for the next subscriber', async (pubsub, run) => {
      const topic = `${run}:again`
      for (let round = 0; round < 5; round++) {
        const iterator = await pubsub.subscribe(topic)
        await pubsub.publish(topic, round)
        expect(await take(iterator, 1)).toEqual([round])
        await iterator.return?.()
      }
      // Subscribing while the last one leaves, in both orders.
      const first = await pubsub.subscribe(topic)
      const [second] = await Promise.all([pubsub.subscribe(topic), first.return?.()])
      const third = pubsub.subscribe(topic)
      await second!.return?.()
      const last = await third
      await pubsub.publish(topic, 'last')
      expect(await take(last, 1)).toEqual(['last'])
      await last.return?.()
    })

    it(`${concurrency} concurrent subscribers MUST each get every payload in order`, async (pubsub, run) => {
      const topic = `${run}:many`
      const iterators = await Promise.all(
        Array.from({ length: concurrency }, () => pubsub.subscribe(topic)),
      )
      for (let i = 0; i < 10; i++) await pubsub.publish(topic, i)
      const received = await Promise.all(iterators.map((iterator) => take(iterator, 10)))
      for (const values of received) expect(values).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      await Promise.all(iterators.map((iterator) => iterator.return?.()))
    })

    it(`${concurrency} concurrent subscribes and leaves on one topic MUST leave it working`, async (pubsub, run) => {
      const topic = `${run}:churn`
      const stayer = await pubsub.subscribe(topic)
      await Promise.all(
        Array.from({ length: concurrency }, async (_, i) => {
          const controller = new AbortController()
          const iterator = await pubsub.subscribe(topic, { signal: controller.signal })
          if (i % 2 === 0) controller.abort()
          else await iterator.return?.()
        }),
      )
      const late = await pubsub.subscribe(topic)
      await pubsub.publish(topic, 'after')
      expect(await take(stayer, 1)).toEqual(['after'])
      expect(await take(late, 1)).toEqual(['after'])
      await Promise.all([stayer.return?.(), late.return?.()])
    })

    it('payloads of several concurrent publishers MUST each arrive in their publish order', async (pubsub, run) => {
      const topic = `${run}:publishers`
      const iterator = await pubsub.subscribe(topic)
      const publishers = 5
      const rounds = 4
      const received: { p: number; i: number }[] = []
      // In rounds of 10 payloads (2 per publisher), each read before the next round: no test
      // leaves more than 10 payloads unread.
      for (let round = 0; round < rounds; round++) {
        await Promise.all(
          Array.from({ length: publishers }, async (_, p) => {
            for (const i of [2 * round, 2 * round + 1]) await pubsub.publish(topic, { p, i })
          }),
        )
        received.push(...((await take(iterator, 2 * publishers)) as { p: number; i: number }[]))
      }
      for (let p = 0; p < publishers; p++) {
        expect(received.filter((m) => m.p === p).map((m) => m.i)).toEqual(
          Array.from({ length: 2 * rounds }, (_, i) => i),
        )
      }
      await iterator.return?.()
    })

    if (bufferSize !== undefined) {
      it(`a subscriber that does not read MUST keep the newest bufferSize (${bufferSize}) payloads, in order`, async (pubsub, run) => {
        const topic = `${run}:slow`
        const slow = await pubsub.subscribe(topic)
        // A reader beside it, read after each publish: once it has a payload, so has the slow
        // subscriber (and the reader itself never falls behind).
        const reader = await pubsub.subscribe(topic)
        const total = bufferSize + 5
        for (let i = 0; i < total; i++) {
          await pubsub.publish(topic, i)
          expect(await take(reader, 1)).toEqual([i])
        }
        expect(await take(slow, bufferSize)).toEqual(
          Array.from({ length: bufferSize }, (_, i) => i + 5),
        )
        // Nothing more is buffered: the next payload is the next one published.
        const next = slow.next()
        await pubsub.publish(topic, 'next')
        expect(await next).toEqual({ done: false, value: 'next' })
        await Promise.all([slow.return?.(), reader.return?.()])
      })
    }
  })
}
