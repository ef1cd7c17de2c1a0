import * as nodeZlib from 'node:zlib'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { compress, nodeEncoders } from './node.ts'

// zstdDecompressSync is missing before Node 22.15.
const zlib = nodeZlib as typeof nodeZlib & {
  zstdDecompressSync?: (data: Uint8Array) => Uint8Array
}

const url = 'https://api.example/v1/orders'
const big = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: i, name: `order ${i}` })))
const handler = async () =>
  new Response(big, { headers: { 'content-type': 'application/json', etag: '"n1"' } })

async function fetchWith(acceptEncoding: string) {
  const response = await compose(compress())(handler)(
    new Request(url, { headers: { 'accept-encoding': acceptEncoding } }),
  )
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) }
}

describe('compress() (Node build over node:zlib)', () => {
  test('offers zstd (where node:zlib has it), br, gzip and deflate', () => {
    const names = Object.keys(nodeEncoders())
    expect(names).toEqual(expect.arrayContaining(['br', 'gzip', 'deflate']))
    expect(names.includes('zstd')).toBe(typeof zlib.zstdDecompressSync === 'function')
  })

  test('prefers zstd, then br, when the client accepts all', async () => {
    const { response, bytes } = await fetchWith('gzip, deflate, br, zstd')
    const expected = typeof zlib.zstdDecompressSync === 'function' ? 'zstd' : 'br'
    expect(response.headers.get('content-encoding')).toBe(expected)
    const decoded =
      expected === 'zstd' ? zlib.zstdDecompressSync!(bytes) : zlib.brotliDecompressSync(bytes)
    expect(new TextDecoder().decode(decoded)).toBe(big)
    // RFC 9110 §8.8.3.3: the coded form's own strong tag names its coding.
    expect(response.headers.get('etag')).toBe(`"n1%-${expected}"`)
    expect(response.headers.get('vary')).toBe('Accept-Encoding')
  })

  test('br at quality 4 round-trips', async () => {
    const { response, bytes } = await fetchWith('br')
    expect(response.headers.get('content-encoding')).toBe('br')
    expect(new TextDecoder().decode(zlib.brotliDecompressSync(bytes))).toBe(big)
  })

  test('gzip round-trips', async () => {
    const { response, bytes } = await fetchWith('gzip')
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(new TextDecoder().decode(zlib.gunzipSync(bytes))).toBe(big)
  })
})
