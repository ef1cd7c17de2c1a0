import { inspect } from 'node:util'
import { headerFieldsOf, wholeBodyOf } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { FastResponse, takeResponseParts } from './fast-response.ts'
import { NativeResponse } from './native.ts'

const Fast = FastResponse as unknown as typeof Response

async function observe(response: Response) {
  return {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    type: response.type,
    url: response.url,
    redirected: response.redirected,
    headers: [...response.headers],
    bodyUsedBefore: response.bodyUsed,
    text: await response.text(),
    bodyUsedAfter: response.bodyUsed,
  }
}

function errorOf(run: () => unknown): { name: string; message: string } | undefined {
  try {
    run()
  } catch (error) {
    return { name: (error as Error).constructor.name, message: (error as Error).message }
  }
  return undefined
}

const bytes = () => new TextEncoder().encode('bytes ✓')

describe('FastResponse behaves as the native Response', () => {
  const cases: Array<[string, () => [BodyInit | null | undefined, ResponseInit | undefined]]> = [
    ['no arguments', () => [undefined, undefined]],
    ['a string', () => ['hello', undefined]],
    ['a string with a record', () => ['hi', { status: 201, headers: { 'X-Id': '7' } }]],
    ['a string with its own Content-Type', () => ['{}', { headers: { 'content-type': 'x/y' } }]],
    ['a string with a Headers', () => ['hi', { headers: new Headers([['set-cookie', 'a=1']]) }]],
    ['null with 204', () => [null, { status: 204 }]],
    ['null with 304 and a header', () => [null, { status: 304, headers: { etag: '"1"' } }]],
    ['bytes', () => [bytes(), undefined]],
    ['an ArrayBuffer', () => [bytes().buffer, { status: 202 }]],
    ['a stream', () => [new Blob(['streamed']).stream(), { headers: { 'content-type': 'a/b' } }]],
    ['a Blob (deferred)', () => [new Blob(['blob'], { type: 'text/x' }), undefined]],
    ['URLSearchParams (deferred)', () => [new URLSearchParams({ a: '1' }), undefined]],
    ['a statusText (deferred)', () => ['x', { status: 299, statusText: 'Fine' }]],
    [
      'header pairs (deferred)',
      () => [
        'x',
        {
          headers: [
            ['a', '1'],
            ['A', '2'],
          ],
        },
      ],
    ],
    ['a padded header (deferred)', () => ['x', { headers: { a: '  padded  ' } }]],
    ['a numeric string status (deferred)', () => ['x', { status: '201' as unknown as number }]],
  ]

  test.each(cases)('%s', async (_, make) => {
    const [nativeArgs, fastArgs] = [make(), make()]
    expect(await observe(new Fast(...fastArgs))).toEqual(
      await observe(new NativeResponse(...nativeArgs)),
    )
  })

  test.each<[string, () => [BodyInit | null, ResponseInit]]>([
    ['status 99', () => ['x', { status: 99 }]],
    ['status 600', () => ['x', { status: 600 }]],
    ['a body with 204', () => ['x', { status: 204 }]],
    ['a body with 304', () => [new Uint8Array(1), { status: 304 }]],
    ['an invalid header name', () => ['x', { headers: { 'bad name': '1' } }]],
    ['a CR LF in a header value', () => ['x', { headers: { a: 'x\r\ny: 1' } }]],
    ['an invalid statusText', () => ['x', { statusText: 'bad\n' }]],
    ['null headers', () => ['x', { headers: null as unknown as HeadersInit }]],
  ])('throws what the native constructor throws for %s', (_, make) => {
    const native = errorOf(() => new NativeResponse(...make()))
    expect(native).toBeDefined()
    expect(errorOf(() => new Fast(...make()))).toEqual(native)
  })

  test('a locked or read stream is refused as natively', async () => {
    const locked = new Blob(['x']).stream()
    locked.getReader()
    expect(errorOf(() => new Fast(locked))).toEqual(errorOf(() => new NativeResponse(locked)))
    const read = new Blob(['x']).stream()
    const reader = read.getReader()
    await reader.read()
    reader.releaseLock()
    expect(errorOf(() => new Fast(read))).toEqual(errorOf(() => new NativeResponse(read)))
  })

  test.each<[string, ResponseInit | undefined]>([
    ['no init', undefined],
    ['a status and a record', { status: 201, headers: { 'x-a': '1' } }],
    ['its own Content-Type', { headers: { 'Content-Type': 'application/problem+json' } }],
    ['a Headers', { headers: new Headers({ vary: 'accept' }) }],
  ])('Response.json with %s', async (_, init) => {
    const data = { a: [1, 'two'], b: null }
    expect(await observe(Fast.json(data, init))).toEqual(
      await observe(NativeResponse.json(data, init)),
    )
  })

  test('Response.json refuses what it cannot serialise or a null-body status', () => {
    expect(errorOf(() => Fast.json(undefined))).toEqual(
      errorOf(() => NativeResponse.json(undefined)),
    )
    expect(errorOf(() => Fast.json({}, { status: 204 }))).toEqual(
      errorOf(() => NativeResponse.json({}, { status: 204 })),
    )
  })

  test('implements every member of Response.prototype itself', () => {
    const own = Object.getOwnPropertyNames(FastResponse.prototype)
    for (const name of Object.getOwnPropertyNames(NativeResponse.prototype)) {
      expect(own, name).toContain(name)
    }
  })

  test('instanceof: every Response counts for the class, subclasses keep their own check', async () => {
    class Custom extends FastResponse {}
    expect(new Fast('x') instanceof NativeResponse).toBe(true)
    expect(new Fast('x') instanceof Fast).toBe(true)
    expect(new NativeResponse('x') instanceof Fast).toBe(true)
    expect(NativeResponse.error() instanceof Fast).toBe(true)
    expect({} instanceof Fast).toBe(false)
    expect(new Custom('x') instanceof Custom).toBe(true)
    expect(new Fast('x') instanceof Custom).toBe(false)
    expect(await new Custom('sub').text()).toBe('sub')
    expect(Object.prototype.toString.call(new Fast('x'))).toBe('[object Response]')
  })

  test('keeps a private copy of a byte body', async () => {
    const body = bytes()
    const response = new Fast(body)
    body.fill(0)
    expect(await response.text()).toBe('bytes ✓')
  })

  test('headers are live, and what they say is what is written', () => {
    const response = new Fast('x', { headers: { 'x-a': '1' } })
    response.headers.set('x-b', '2')
    response.headers.append('set-cookie', 'c=3')
    const parts = takeResponseParts(response)!
    expect([...parts.headers!]).toEqual([
      ['content-type', 'text/plain;charset=UTF-8'],
      ['set-cookie', 'c=3'],
      ['x-a', '1'],
      ['x-b', '2'],
    ])
  })

  test('clone() gives an independent copy, before and after the body was touched', async () => {
    const original = new Fast('twice', { headers: { 'x-a': '1' } })
    const copy = original.clone()
    copy.headers.set('x-a', 'changed')
    expect(original.headers.get('x-a')).toBe('1')
    expect(await copy.text()).toBe('twice')
    expect(await original.clone().text()).toBe('twice')
    expect(await original.text()).toBe('twice')
    expect(() => original.clone()).toThrow(TypeError)

    const streamed = new Fast(new Blob(['tee']).stream())
    streamed.headers.set('x-late', 'yes')
    const teed = streamed.clone()
    expect(teed.headers.get('x-late')).toBe('yes')
    expect([await teed.text(), await streamed.text()]).toEqual(['tee', 'tee'])
  })

  test('a body read twice fails as natively', async () => {
    const response = new Fast('once')
    await response.text()
    await expect(response.text()).rejects.toThrow(TypeError)
  })

  test('a body the writer took reads as used, and cannot be taken again', async () => {
    const response = new Fast('sent')
    expect(takeResponseParts(response)?.body).toBe('sent')
    expect(response.bodyUsed).toBe(true)
    expect(() => takeResponseParts(response)).toThrow(/already sent/)
    await expect(response.text()).rejects.toThrow(TypeError)
    const empty = new Fast(null)
    takeResponseParts(empty)
    expect(takeResponseParts(empty)?.body).toBeNull()
  })

  test('a materialised response is written through its public API', async () => {
    const response = new Fast('x')
    void response.body
    expect(takeResponseParts(response)).toBeUndefined()
    expect(takeResponseParts(new NativeResponse('x'))).toBeUndefined()
  })

  test("core's wholeBodyOf answers a body held in memory without consuming it", async () => {
    const whole = wholeBodyOf
    const text = new Fast('kept')
    expect(whole(text)).toBe('kept')
    expect(text.bodyUsed).toBe(false)
    expect(await text.text()).toBe('kept')
    expect(whole(text)).toBeUndefined() // materialised and read
    expect(whole(new Fast(bytes()))).toEqual(bytes())
    expect(whole(new Fast(null))).toBeNull()
    expect(whole(Fast.json({ a: 1 }))).toBe('{"a":1}')
    expect(whole(new Fast(new Blob(['s']).stream()))).toBeUndefined()
    const sent = new Fast('sent')
    takeResponseParts(sent)
    expect(whole(sent)).toBeUndefined()
    const touched = new Fast('x')
    void touched.body
    expect(whole(touched)).toBeUndefined()
    expect(whole(new NativeResponse('native'))).toBeUndefined()
  })

  test("core's headerFieldsOf lists a plain record as the adapter writes it, until headers is built", () => {
    const fields = headerFieldsOf
    const plain = new Fast('x', { headers: { ETag: '"1"', 'X-Id': 'a' } })
    expect(fields(plain)).toEqual([
      'etag',
      '"1"',
      'x-id',
      'a',
      'content-type',
      'text/plain;charset=UTF-8',
    ])
    // The same fields Headers iteration yields, in insertion order instead of sorted.
    const listed = fields(plain) as readonly string[]
    const pairs = [...plain.headers]
    expect(
      Object.fromEntries(listed.flatMap((_, i) => (i % 2 ? [] : [[listed[i], listed[i + 1]]]))),
    ).toEqual(Object.fromEntries(pairs))
    // Once built, the Headers object is the truth (it may have been changed).
    plain.headers.set('x-id', 'b')
    expect(fields(plain)).toBeUndefined()
    expect(fields(new Fast(null))).toEqual([])
    expect(fields(new Fast(bytes(), { headers: { 'Content-Type': 'image/png' } }))).toEqual([
      'content-type',
      'image/png',
    ])
    expect(fields(Fast.json({ a: 1 }))).toEqual(['content-type', 'application/json'])
    expect(fields(new Fast('x', { headers: new Headers({ a: '1' }) }))).toBeUndefined()
    expect(fields(new NativeResponse('native'))).toBeUndefined()
  })

  test('inspects like a Response', () => {
    expect(inspect(new Fast('shown', { status: 201 }))).toMatch(/^Response .*status: 201/s)
  })
})
