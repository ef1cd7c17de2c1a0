/**
 * The conformance suite of {@link PersistedDocumentStore}: every store (memory, Redis,
 * PostgreSQL, yours) registers it in its own test file and must pass it unchanged. It checks
 * the contract of `persisted/store.ts` as the endpoint relies on it: a document comes back
 * exactly as stored, an unknown id answers `undefined`, ids are compared exactly, storing a pair
 * again is harmless and a new document under an id replaces the old one, an id no store can hold
 * (from the network) is a miss rather than a failure, and 50 racing sets and gets agree. Every
 * test uses fresh random ids, so the suite can run against a shared server.
 *
 * @module
 */
import { describe, expect } from 'vitest'
import type { PersistedDocumentStore } from '../persisted/store.ts'
import type { CommonOptions } from './shared.ts'
import { AWKWARD, promised, registrar } from './shared.ts'

/**
 * Options of {@link runPersistedDocumentStoreConformance}.
 *
 * @example
 * ```ts
 * const options: PersistedDocumentStoreConformanceOptions = { maxDocumentBytes: 100 * 1024 }
 * ```
 */
export interface PersistedDocumentStoreConformanceOptions
  extends CommonOptions<PersistedDocumentStore> {
  /**
   * The store's limit on one document, in UTF-8 bytes: when given, a document of exactly that
   * many bytes must be stored and one byte more refused with a `RangeError`.
   */
  readonly maxDocumentBytes?: number
}

/** A `sha256:` id of the form the endpoint stores APQ and `documentId` documents under. */
function sha256Id(run: string, n = 0): string {
  const hex = Array.from(`${run}:${n}`, (c) => c.charCodeAt(0).toString(16).padStart(2, '0'))
    .join('')
    .padEnd(64, '0')
    .slice(0, 64)
  return `sha256:${hex}`
}

/** A document of `bytes` UTF-8 bytes, multi-byte characters included, starting with `run`. */
function documentOf(run: string, bytes: number): string {
  // `run` is ASCII; 'é' is 2 bytes, '東' 3, '🎉' 4.
  const head = `# ${run} é東🎉\n{ __typename }\n#`
  let text = head
  let size = new TextEncoder().encode(head).length
  while (size < bytes) {
    text += 'x'
    size++
  }
  return text
}

/**
 * Registers the conformance tests of a {@link PersistedDocumentStore} with vitest (an optional
 * peer dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makeStore gives a ready store for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryPersistedDocumentStore } from '@api-blocks/graphql'
 * import { runPersistedDocumentStoreConformance } from '@api-blocks/graphql/testing'
 *
 * runPersistedDocumentStoreConformance('memory', () => new MemoryPersistedDocumentStore(), {
 *   maxDocumentBytes: 100 * 1024,
 * })
 * ```
 */
export function runPersistedDocumentStoreConformance(
  name: string,
  makeStore: () => PersistedDocumentStore | Promise<PersistedDocumentStore>,
  options: PersistedDocumentStoreConformanceOptions = {},
): void {
  const { maxDocumentBytes } = options
  if (
    maxDocumentBytes !== undefined &&
    (!Number.isSafeInteger(maxDocumentBytes) || maxDocumentBytes < 64)
  ) {
    throw new RangeError(
      'runPersistedDocumentStoreConformance: maxDocumentBytes must be an integer >= 64',
    )
  }
  const { it, concurrency } = registrar('runPersistedDocumentStoreConformance', makeStore, options)

  describe(`PersistedDocumentStore conformance: ${name}`, () => {
    it('every method MUST return a Promise', async (store, run) => {
      expect(await promised(store.set(sha256Id(run), '{ __typename }'))).toBeUndefined()
      expect(await promised(store.get(sha256Id(run)))).toBe('{ __typename }')
      expect(await promised(store.get(sha256Id(run, 1)))).toBeUndefined()
    })

    it('get MUST answer the document stored under the id, and undefined for an unknown id', async (store, run) => {
      const query = `query Orders_${run.replaceAll('-', '_')} { orders(first: 2) { edges { cursor } } }`
      expect(await store.get(sha256Id(run))).toBeUndefined()
      await store.set(sha256Id(run), query)
      expect(await store.get(sha256Id(run))).toBe(query)
      expect(await store.get(sha256Id(run))).toBe(query)
      expect(await store.get(sha256Id(run, 1))).toBeUndefined()
    })

    it('documents MUST come back exactly: quotes, newlines, non-ASCII and astral characters, 20 KB (or maxDocumentBytes)', async (store, run) => {
      const documents = [
        `# ${AWKWARD}\n{ __typename }`,
        `{ a: __typename }\r\n\t# ${run}\u0000\ud83c\udf89`,
        documentOf(run, Math.min(20_000, maxDocumentBytes ?? 20_000)),
        ' ',
      ]
      for (const [i, document] of documents.entries()) await store.set(sha256Id(run, i), document)
      for (const [i, document] of documents.entries()) {
        expect(await store.get(sha256Id(run, i))).toBe(document)
      }
    })

    it('ids MUST be compared exactly: case, spaces, unusual characters and 256 characters', async (store, run) => {
      const ids = [
        sha256Id(run),
        sha256Id(run).toUpperCase(),
        `${sha256Id(run)} `,
        ` ${sha256Id(run)}`,
        `${run}:*`,
        `${run}:${AWKWARD}`,
        `${run}${'x'.repeat(256 - run.length)}`,
        `${run}${'x'.repeat(255 - run.length)}`,
      ]
      for (const [i, id] of ids.entries()) await store.set(id, `{ __typename } # ${i}`)
      for (const [i, id] of ids.entries()) expect(await store.get(id)).toBe(`{ __typename } # ${i}`)
    })

    it('storing the same pair again MUST be harmless, and a new document under an id MUST replace it', async (store, run) => {
      const id = sha256Id(run)
      await store.set(id, '{ a: __typename }')
      await store.set(id, '{ a: __typename }')
      expect(await store.get(id)).toBe('{ a: __typename }')
      await store.set(id, '{ b: __typename }')
      expect(await store.get(id)).toBe('{ b: __typename }')
    })

    it('get of an id no store can hold (empty, 257 characters, not a string) MUST answer undefined', async (store, run) => {
      expect(await store.get('')).toBeUndefined()
      expect(await store.get(`${run}${'x'.repeat(257 - run.length)}`)).toBeUndefined()
      expect(await store.get('x'.repeat(100_000))).toBeUndefined()
      for (const id of [undefined, null, 42, {}, ['sha256:00']]) {
        expect(await store.get(id as unknown as string)).toBeUndefined()
      }
    })

    it('set with an id outside 1 to 256 characters MUST reject with a RangeError and store nothing', async (store, run) => {
      const long = `${run}${'x'.repeat(257 - run.length)}`
      await expect(store.set('', '{ __typename }')).rejects.toThrow(RangeError)
      await expect(store.set(long, '{ __typename }')).rejects.toThrow(RangeError)
      expect(await store.get(long)).toBeUndefined()
    })

    if (maxDocumentBytes !== undefined) {
      it(`a document of maxDocumentBytes (${maxDocumentBytes}) MUST be stored, one byte more refused with a RangeError`, async (store, run) => {
        const fits = documentOf(run, maxDocumentBytes)
        await store.set(sha256Id(run), fits)
        expect(await store.get(sha256Id(run))).toBe(fits)
        await expect(store.set(sha256Id(run, 1), `${fits}x`)).rejects.toThrow(RangeError)
        expect(await store.get(sha256Id(run, 1))).toBeUndefined()
        // Counted in UTF-8 bytes: one more 2-byte character is over too.
        await expect(store.set(sha256Id(run, 2), `${fits.slice(0, -1)}é`)).rejects.toThrow(
          RangeError,
        )
      })
    }

    it(`${concurrency} concurrent sets of different ids, then ${concurrency} concurrent gets, MUST each find its document`, async (store, run) => {
      const ids = Array.from({ length: concurrency }, (_, i) => sha256Id(run, i))
      await Promise.all(ids.map((id, i) => store.set(id, `{ __typename } # ${run} ${i}`)))
      const found = await Promise.all(ids.map((id) => store.get(id)))
      expect(found).toEqual(ids.map((_, i) => `{ __typename } # ${run} ${i}`))
    })

    it(`${concurrency} concurrent sets and gets of one id MUST answer the document or undefined, and the document after`, async (store, run) => {
      const id = sha256Id(run)
      const document = `{ __typename } # ${run}`
      const answers = await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          i % 2 === 0 ? store.set(id, document).then(() => document) : store.get(id),
        ),
      )
      for (const answer of answers) expect([document, undefined]).toContain(answer)
      expect(await store.get(id)).toBe(document)
    })

    it(`${concurrency} concurrent sets of different documents under one id MUST leave exactly one of them`, async (store, run) => {
      const id = sha256Id(run)
      const documents = Array.from({ length: concurrency }, (_, i) => `{ __typename } # ${i}`)
      await Promise.all(documents.map((document) => store.set(id, document)))
      expect(documents).toContain(await store.get(id))
    })
  })
}
