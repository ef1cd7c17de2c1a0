import { describe, expect, test } from 'vitest'
import {
  defineBodySlots,
  handOnParsedJson,
  headerFieldsOf,
  restoreBody,
  takeParsedJson,
  wholeBodyOf,
} from './body-slots.ts'

class Held extends Request {
  held: Uint8Array | undefined = new TextEncoder().encode('{"a":1}')
}
defineBodySlots(Held.prototype, {
  wholeBody(this: Held) {
    return this.held
  },
  restoreBody(this: Held, bytes: Uint8Array) {
    this.held = bytes
    return true
  },
})
class Fielded extends Response {}
defineBodySlots(Fielded.prototype, {
  wholeBody: () => 'text',
  headerFields: () => ['content-type', 'text/plain'],
})

const post = () => new Held('https://api.example/', { method: 'POST', body: '{"a":1}' })

describe('body slots', () => {
  test('a plain Request or Response has none', () => {
    const request = new Request('https://api.example/', { method: 'POST', body: 'x' })
    expect(wholeBodyOf(request)).toBeUndefined()
    expect(headerFieldsOf(new Response('x'))).toBeUndefined()
    expect(restoreBody(request, new Uint8Array(1))).toBe(false)
  })

  test('a provider answers through them', () => {
    expect(wholeBodyOf(post())).toEqual(new TextEncoder().encode('{"a":1}'))
    expect(wholeBodyOf(new Fielded('text'))).toBe('text')
    expect(headerFieldsOf(new Fielded('text'))).toEqual(['content-type', 'text/plain'])
    const request = post()
    const bytes = new Uint8Array([1])
    expect(restoreBody(request, bytes)).toBe(true)
    expect(wholeBodyOf(request)).toBe(bytes)
  })

  test('a slot answering something else than its type reads as absent', () => {
    class Odd extends Response {}
    Object.defineProperty(Odd.prototype, Symbol.for('api-blocks.whole-body'), { get: () => 42 })
    Object.defineProperty(Odd.prototype, Symbol.for('api-blocks.header-fields'), { get: () => 'x' })
    expect(wholeBodyOf(new Odd('x'))).toBeUndefined()
    expect(headerFieldsOf(new Odd('x'))).toBeUndefined()
  })
})

describe('parsed JSON hand-off', () => {
  test('is taken once, while the body is still the same bytes', () => {
    const request = post()
    handOnParsedJson(request, request.held!, { a: 1 })
    expect(takeParsedJson(request)).toEqual({ bytes: request.held, value: { a: 1 } })
    expect(takeParsedJson(request)).toBeUndefined()
  })

  test('is refused when the body changed since, or was never held', () => {
    const changed = post()
    handOnParsedJson(changed, changed.held!, { a: 1 })
    changed.held = new TextEncoder().encode('{"a":2}')
    expect(takeParsedJson(changed)).toBeUndefined()
    const plain = new Request('https://api.example/', { method: 'POST', body: '{"a":1}' })
    handOnParsedJson(plain, new Uint8Array(0), { a: 1 })
    expect(takeParsedJson(plain)).toBeUndefined()
  })
})
