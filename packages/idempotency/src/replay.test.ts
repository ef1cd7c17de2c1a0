import { defineBodySlots } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import {
  NEVER_REPLAYED_HEADERS,
  replayResponse,
  storableHeaders,
  storedFieldsOf,
} from './replay.ts'

describe('storableHeaders', () => {
  test('drops hop-by-hop fields, Date, Content-Length and Set-Cookie; keeps the rest', () => {
    const headers = new Headers([
      ['content-type', 'application/json'],
      ['location', '/v1/orders/42'],
      ['etag', '"v2"'],
      ['date', 'Tue, 01 Apr 2025 10:00:00 GMT'],
      ['content-length', '12'],
      ['keep-alive', 'timeout=5'],
      ['transfer-encoding', 'chunked'],
      ['set-cookie', 'session=abc'],
      ['set-cookie', 'theme=dark'],
      ['x-request-id', 'req-1'],
    ])
    expect(storableHeaders(headers)).toEqual([
      ['content-type', 'application/json'],
      ['etag', '"v2"'],
      ['location', '/v1/orders/42'],
      ['x-request-id', 'req-1'],
    ])
  })

  test('RFC 9110 §7.6.1: fields named by Connection are hop-by-hop too', () => {
    const headers = new Headers({ connection: 'close, X-Hop', 'x-hop': '1', 'x-keep': '2' })
    expect(storableHeaders(headers)).toEqual([['x-keep', '2']])
  })

  test('omit adds names, case-insensitively', () => {
    const headers = new Headers({ 'x-trace': 't', vary: 'Accept' })
    expect(storableHeaders(headers, ['X-Trace'])).toEqual([['vary', 'Accept']])
  })

  test('the deny list is frozen', () => {
    expect(Object.isFrozen(NEVER_REPLAYED_HEADERS)).toBe(true)
  })
})

describe('replayResponse', () => {
  test('the stored status, header fields and body, plus Idempotent-Replayed: true', async () => {
    const body = new Uint8Array([0, 1, 2, 255])
    const response = replayResponse({
      status: 201,
      headers: [
        ['content-type', 'application/octet-stream'],
        ['link', '</a>; rel="a"'],
      ],
      body,
    })
    expect(response.status).toBe(201)
    expect(response.headers.get('idempotent-replayed')).toBe('true')
    expect(response.headers.get('link')).toBe('</a>; rel="a"')
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(body)
  })

  test('a null-body status (204, 304) is replayed without a body', async () => {
    const response = replayResponse({ status: 204, headers: [], body: new Uint8Array(0) })
    expect(response.status).toBe(204)
    expect(response.body).toBeNull()
  })

  test('each replay is a new Response: two replays can both be read', async () => {
    const stored = { status: 200, headers: [], body: new TextEncoder().encode('once') }
    expect(await replayResponse(stored).text()).toBe('once')
    expect(await replayResponse(stored).text()).toBe('once')
  })
})

describe('storedFieldsOf', () => {
  // A Response that keeps its fields as a flat list, as @api-blocks/node's does.
  class FieldsResponse extends Response {
    readonly fields: string[]
    constructor(fields: string[]) {
      super('x', { headers: { 'x-from-headers': 'not read' } })
      this.fields = fields
    }
  }
  defineBodySlots(FieldsResponse.prototype, {
    headerFields() {
      return this.fields
    },
  })
  const withFields = (fields: string[]) => new FieldsResponse(fields)

  test('reads the header-fields slot when there is one, with the same rules as storableHeaders', () => {
    const fields = [
      'location',
      '/v1/orders/42',
      'connection',
      'close, X-Hop',
      'x-hop',
      '1',
      'date',
      'Tue, 01 Apr 2025 10:00:00 GMT',
      'set-cookie',
      'session=abc',
      'x-trace',
      't',
      'content-type',
      'application/json',
    ]
    const stored = storedFieldsOf(withFields(fields), ['X-Trace'])
    expect(stored).toEqual([
      ['location', '/v1/orders/42'],
      ['content-type', 'application/json'],
    ])
    // The same fields as through a Headers object, which sorts them.
    const headers = new Headers()
    for (let index = 0; index < fields.length; index += 2) {
      headers.append(fields[index] as string, fields[index + 1] as string)
    }
    expect(new Map(stored)).toEqual(new Map(storableHeaders(headers, ['X-Trace'])))
  })

  test('without the slot, reads response.headers', () => {
    const response = new Response('x', { headers: { etag: '"1"', date: 'now' } })
    expect(storedFieldsOf(response, [])).toEqual([
      ['content-type', 'text/plain;charset=UTF-8'],
      ['etag', '"1"'],
    ])
  })
})
