import { describe, expect, test } from 'vitest'
import type { CaptureOutcome } from './capture.ts'
import { captureBody } from './capture.ts'

function source(chunks: readonly number[][], options: { failAt?: number } = {}) {
  let index = 0
  let cancelled: unknown = 'not cancelled'
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (index === options.failAt) return controller.error(new Error('upstream broke'))
        const chunk = chunks[index++]
        if (chunk === undefined) controller.close()
        else controller.enqueue(new Uint8Array(chunk))
      },
      cancel(reason) {
        cancelled = reason
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, cancelled: () => cancelled, pulled: () => index }
}

function outcomes() {
  const seen: CaptureOutcome[] = []
  let resolve: (outcome: CaptureOutcome) => void = () => {}
  const first = new Promise<CaptureOutcome>((done) => {
    resolve = done
  })
  return {
    seen,
    first,
    onEnd: async (outcome: CaptureOutcome) => {
      seen.push(outcome)
      resolve(outcome)
    },
  }
}

const bytes = async (stream: ReadableStream<Uint8Array>) => [
  ...new Uint8Array(await new Response(stream).arrayBuffer()),
]

describe('captureBody', () => {
  test('the client gets every chunk unchanged; the copy is the whole body', async () => {
    const { stream } = source([[1, 2], [3], [4, 5, 6]])
    const ends = outcomes()
    expect(await bytes(captureBody(stream, { maxBytes: 100, onEnd: ends.onEnd }))).toEqual([
      1, 2, 3, 4, 5, 6,
    ])
    expect(ends.seen).toHaveLength(1)
    expect(ends.seen[0]).toEqual({ kind: 'complete', body: new Uint8Array([1, 2, 3, 4, 5, 6]) })
  })

  test('the client sees the end only after onEnd finished (a stored result before the retry)', async () => {
    const { stream } = source([[1]])
    let stored = false
    const tee = captureBody(stream, {
      maxBytes: 10,
      onEnd: async () => {
        await Promise.resolve()
        await Promise.resolve()
        stored = true
      },
    })
    const reader = tee.getReader()
    expect((await reader.read()).done).toBe(false)
    expect((await reader.read()).done).toBe(true)
    expect(stored).toBe(true)
  })

  test('a body within the limit is captured even when no one reads it', async () => {
    const { stream } = source([[1], [2], [3]])
    const ends = outcomes()
    captureBody(stream, { maxBytes: 3, onEnd: ends.onEnd })
    expect(await ends.first).toEqual({ kind: 'complete', body: new Uint8Array([1, 2, 3]) })
  })

  test('over the limit: too-large is reported once, and the client still gets every byte', async () => {
    const { stream } = source([[1, 2], [3, 4], [5]])
    const ends = outcomes()
    expect(await bytes(captureBody(stream, { maxBytes: 3, onEnd: ends.onEnd }))).toEqual([
      1, 2, 3, 4, 5,
    ])
    expect(ends.seen).toEqual([{ kind: 'too-large' }])
  })

  test('a body of exactly the limit is kept', async () => {
    const { stream } = source([[1, 2], [3]])
    const ends = outcomes()
    await bytes(captureBody(stream, { maxBytes: 3, onEnd: ends.onEnd }))
    expect(ends.seen).toEqual([{ kind: 'complete', body: new Uint8Array([1, 2, 3]) }])
  })

  test('a failing source is reported and reaches the client as an error', async () => {
    const { stream } = source([[1], [2]], { failAt: 1 })
    const ends = outcomes()
    await expect(bytes(captureBody(stream, { maxBytes: 100, onEnd: ends.onEnd }))).rejects.toThrow(
      'upstream broke',
    )
    expect(ends.seen).toHaveLength(1)
    expect(ends.seen[0]?.kind).toBe('error')
  })

  test('a client that leaves early does not lose the result: the body is read on and kept', async () => {
    // The source holds back every chunk after the first until the gate opens, so the client
    // leaves while the body is still coming.
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let index = 0
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (index > 0) await gate
          if (index === 5) return controller.close()
          controller.enqueue(new Uint8Array([index++]))
        },
      },
      { highWaterMark: 0 },
    )
    const ends = outcomes()
    const reader = captureBody(stream, { maxBytes: 1000, onEnd: ends.onEnd }).getReader()
    expect((await reader.read()).value).toEqual(new Uint8Array([0]))
    await reader.cancel('client left')
    expect(ends.seen).toEqual([])
    open()
    expect(await ends.first).toEqual({ kind: 'complete', body: new Uint8Array([0, 1, 2, 3, 4]) })
  })

  test('a client that leaves after the copy was abandoned cancels the source', async () => {
    const big = Array.from({ length: 10 }, () => Array.from({ length: 10 }, () => 7))
    const { stream, cancelled } = source(big)
    const ends = outcomes()
    const reader = captureBody(stream, { maxBytes: 15, onEnd: ends.onEnd }).getReader()
    await reader.read()
    await reader.read()
    expect(await ends.first).toEqual({ kind: 'too-large' })
    await reader.cancel('bye')
    expect(cancelled()).toBe('bye')
  })

  test('a chunk that is not bytes is an error', async () => {
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue('text' as unknown as Uint8Array)
        controller.close()
      },
    })
    const ends = outcomes()
    await expect(bytes(captureBody(stream, { maxBytes: 10, onEnd: ends.onEnd }))).rejects.toThrow(
      /not a Uint8Array/,
    )
    expect(ends.seen[0]?.kind).toBe('error')
  })
})
