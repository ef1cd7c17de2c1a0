import { describe, expect, test } from 'vitest'
import { MemoryPersistedDocumentStore } from '../src/persisted/memory.ts'
import type { PubSubEvent } from '../src/pubsub/memory.ts'
import { MemoryPubSub } from '../src/pubsub/memory.ts'
import { runPersistedDocumentStoreConformance, runPubSubConformance } from '../src/testing/index.ts'

runPersistedDocumentStoreConformance('memory', () => new MemoryPersistedDocumentStore(), {
  maxDocumentBytes: 100 * 1024,
})
runPersistedDocumentStoreConformance(
  'memory (small)',
  () => new MemoryPersistedDocumentStore({ maxDocuments: 60, maxDocumentBytes: 1024 }),
  { maxDocumentBytes: 1024 },
)
runPubSubConformance('memory', () => new MemoryPubSub(), { bufferSize: 100 })
runPubSubConformance('memory (buffer 10)', () => new MemoryPubSub({ bufferSize: 10 }), {
  bufferSize: 10,
})

describe('MemoryPersistedDocumentStore', () => {
  test('options out of range are refused', () => {
    for (const options of [
      { maxDocuments: 0 },
      { maxDocuments: 1.5 },
      { maxDocumentBytes: 0 },
      { maxTotalBytes: Number.NaN },
      { maxDocumentBytes: 2048, maxTotalBytes: 1024 },
    ]) {
      expect(() => new MemoryPersistedDocumentStore(options)).toThrow(RangeError)
    }
    const store = new MemoryPersistedDocumentStore()
    expect([store.maxDocuments, store.maxDocumentBytes, store.maxTotalBytes]).toEqual([
      1000,
      100 * 1024,
      16 * 1024 * 1024,
    ])
  })

  test('past maxDocuments the least recently used document goes (a get makes one recent)', async () => {
    const store = new MemoryPersistedDocumentStore({ maxDocuments: 3 })
    for (const id of ['a', 'b', 'c']) await store.set(id, `{ ${id}: __typename }`)
    expect(await store.get('a')).toBe('{ a: __typename }') // a is now the most recent
    await store.set('d', '{ d: __typename }') // b goes
    expect(await store.get('b')).toBeUndefined()
    await store.set('c', '{ c2: __typename }') // a set makes c recent too: a goes next
    await store.set('e', '{ e: __typename }')
    expect(await store.get('a')).toBeUndefined()
    expect(await Promise.all(['c', 'd', 'e'].map((id) => store.get(id)))).toEqual([
      '{ c2: __typename }',
      '{ d: __typename }',
      '{ e: __typename }',
    ])
    expect(store.size).toBe(3)
  })

  test('a get moves a document only from the older half; one in the newer half survives maxDocuments / 2 sets', async () => {
    const store = new MemoryPersistedDocumentStore({ maxDocuments: 4 })
    for (const id of ['a', 'b', 'c', 'd']) await store.set(id, `{ ${id}: __typename }`)
    expect(await store.get('c')).toBe('{ c: __typename }') // newer half: stays in place
    await store.set('e', '{ e: __typename }') // a goes
    await store.set('f', '{ f: __typename }') // b goes
    expect(await store.get('a')).toBeUndefined()
    expect(await store.get('b')).toBeUndefined()
    // c is now the oldest: this get moves it (older half), so d goes next, not c.
    expect(await store.get('c')).toBe('{ c: __typename }')
    await store.set('g', '{ g: __typename }')
    expect(await store.get('d')).toBeUndefined()
    expect(await store.get('c')).toBe('{ c: __typename }')
  })

  test('the total byte budget evicts the least recently used, counting UTF-8 bytes exactly', async () => {
    const store = new MemoryPersistedDocumentStore({ maxDocumentBytes: 100, maxTotalBytes: 250 })
    await store.set('a', 'a'.repeat(100))
    await store.set('b', 'é'.repeat(50)) // 100 bytes
    expect(store.bytes).toBe(200)
    await store.set('c', '🎉'.repeat(12)) // 48 bytes: 248 in all
    expect([store.size, store.bytes]).toEqual([3, 248])
    await store.set('d', '東'.repeat(1)) // 3 bytes: a goes
    expect(await store.get('a')).toBeUndefined()
    expect([store.size, store.bytes]).toEqual([3, 151])
    // Replacing a document counts its new size only.
    await store.set('b', 'x')
    expect(store.bytes).toBe(52)
    // A lone surrogate counts 3 bytes (U+FFFD), a pair 4.
    await expect(store.set('e', `${'x'.repeat(97)}\ud800`)).resolves.toBeUndefined()
    await expect(store.set('f', `${'x'.repeat(97)}\ud83c\udf89`)).rejects.toThrow(RangeError)
  })

  test('set of a non-string document is a TypeError', async () => {
    const store = new MemoryPersistedDocumentStore()
    await expect(store.set('a', 5 as unknown as string)).rejects.toThrow(TypeError)
  })
})

describe('MemoryPubSub', () => {
  test('options out of range are refused; topics must be non-empty strings', async () => {
    expect(() => new MemoryPubSub({ bufferSize: 0 })).toThrow(RangeError)
    expect(() => new MemoryPubSub({ bufferSize: 2.5 })).toThrow(RangeError)
    expect(
      () => new MemoryPubSub({ onEvent: 'log' as unknown as (event: PubSubEvent) => void }),
    ).toThrow(TypeError)
    const pubsub = new MemoryPubSub()
    await expect(pubsub.publish('', 1)).rejects.toThrow(TypeError)
    await expect(pubsub.subscribe('')).rejects.toThrow(TypeError)
    await expect(pubsub.subscribe(5 as unknown as string)).rejects.toThrow(TypeError)
  })

  test('drops are reported per subscriber to onEvent, and an ended subscriber is released', async () => {
    const events: PubSubEvent[] = []
    const pubsub = new MemoryPubSub({ bufferSize: 2, onEvent: (event) => events.push(event) })
    const slow = await pubsub.subscribe('t')
    const controller = new AbortController()
    const other = await pubsub.subscribe('t', { signal: controller.signal })
    expect(pubsub.subscribers('t')).toBe(2)
    for (const n of [1, 2, 3, 4]) await pubsub.publish('t', n)
    expect(events).toEqual([
      { type: 'dropped', topic: 't', dropped: 1 },
      { type: 'dropped', topic: 't', dropped: 1 },
      { type: 'dropped', topic: 't', dropped: 2 },
      { type: 'dropped', topic: 't', dropped: 2 },
    ])
    controller.abort()
    expect(pubsub.subscribers('t')).toBe(1)
    expect(await other.next()).toEqual({ done: true, value: undefined })
    await slow.return?.()
    expect(pubsub.subscribers('t')).toBe(0)
    await pubsub.publish('t', 5)
    expect(events).toHaveLength(4)
  })

  test('an onEvent that throws stops no delivery', async () => {
    const pubsub = new MemoryPubSub({
      bufferSize: 1,
      onEvent: () => {
        throw new Error('observer failed')
      },
    })
    const slow = await pubsub.subscribe('t')
    const other = await pubsub.subscribe('t')
    await pubsub.publish('t', 1)
    await expect(pubsub.publish('t', 2)).resolves.toBeUndefined()
    expect(await slow.next()).toEqual({ done: false, value: 2 })
    expect(await other.next()).toEqual({ done: false, value: 2 })
  })

  test('several waiting next() calls are served in order; the same object is delivered', async () => {
    const pubsub = new MemoryPubSub()
    const iterator = await pubsub.subscribe('t')
    const waiting = [iterator.next(), iterator.next()]
    const payload = { id: 1 }
    await pubsub.publish('t', payload)
    await pubsub.publish('t', 2)
    const [first, second] = await Promise.all(waiting)
    expect(first!.value).toBe(payload)
    expect(second).toEqual({ done: false, value: 2 })
  })

  test('for await … of ends when the signal aborts', async () => {
    const pubsub = new MemoryPubSub()
    const controller = new AbortController()
    const iterator = await pubsub.subscribe('t', { signal: controller.signal })
    const seen: unknown[] = []
    const loop = (async () => {
      for await (const value of iterator) {
        seen.push(value)
        if (seen.length === 2) controller.abort()
      }
    })()
    for (const n of [1, 2, 3]) await pubsub.publish('t', n)
    await loop
    expect(seen).toEqual([1, 2])
    expect(pubsub.subscribers('t')).toBe(0)
  })
})
