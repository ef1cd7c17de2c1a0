/**
 * Tees a response body: the client gets the stream as it comes while a copy is kept, up to a
 * limit, for the store.
 *
 * - The returned stream pulls ahead of its reader up to `maxBytes + 1` bytes (its high-water
 *   mark), so a body that fits the limit is read, kept and reported even when no one reads
 *   the response; a larger body then flows at the client's pace.
 * - `onEnd` is awaited before the client sees the end of the body, so a client that has read
 *   a whole response and retries at once finds it stored.
 * - If the client goes away first, the body is still read to its end (or the limit) so the
 *   result of an operation that already ran is not lost.
 *
 * @module
 */

/** How a captured body ended. */
export type CaptureOutcome =
  /** The whole body, within the limit. */
  | { readonly kind: 'complete'; readonly body: Uint8Array }
  /** The body went over the limit; nothing was kept. */
  | { readonly kind: 'too-large' }
  /** The body stream failed. */
  | { readonly kind: 'error'; readonly error: unknown }

/** Options of {@link captureBody}. */
export interface CaptureOptions {
  /** The most bytes kept; one more and the outcome is `too-large`. */
  readonly maxBytes: number
  /** Called once with the outcome; awaited before the client stream ends. Must not throw. */
  readonly onEnd: (outcome: CaptureOutcome) => Promise<void>
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

/**
 * Returns a stream that yields `source`'s chunks unchanged while keeping a copy (see the
 * module documentation).
 *
 * @example
 * ```ts
 * const body = captureBody(response.body, { maxBytes: 1 << 20, onEnd: async (outcome) => save(outcome) })
 * return new Response(body, response)
 * ```
 */
export function captureBody(
  source: ReadableStream<Uint8Array>,
  options: CaptureOptions,
): ReadableStream<Uint8Array> {
  const { maxBytes, onEnd } = options
  const reader = source.getReader()
  let chunks: Uint8Array[] = []
  let length = 0
  let capturing = true
  let ended = false
  let pending: Promise<void> = Promise.resolve()

  const end = async (outcome: CaptureOutcome): Promise<void> => {
    if (ended) return
    ended = true
    chunks = []
    await onEnd(outcome)
  }

  /** Keeps a copy of one chunk, until the copy goes over the limit. */
  const keep = async (chunk: Uint8Array): Promise<void> => {
    if (!capturing) return
    length += chunk.byteLength
    if (length > maxBytes) {
      capturing = false
      await end({ kind: 'too-large' })
      return
    }
    chunks.push(chunk.slice())
  }

  /** One read: `true` when the source is done. */
  const step = async (enqueue: ((chunk: Uint8Array) => void) | undefined): Promise<boolean> => {
    let result: ReadableStreamReadResult<Uint8Array>
    try {
      result = await reader.read()
      if (!result.done && !(result.value instanceof Uint8Array)) {
        throw new TypeError('A response body chunk is not a Uint8Array')
      }
    } catch (error) {
      await end({ kind: 'error', error })
      throw error
    }
    if (result.done) {
      await end(
        capturing ? { kind: 'complete', body: concat(chunks, length) } : { kind: 'too-large' },
      )
      return true
    }
    await keep(result.value)
    enqueue?.(result.value)
    return false
  }

  const drain = async (reason: unknown): Promise<void> => {
    try {
      await pending.catch(() => undefined)
      while (capturing && !ended) if (await step(undefined)) return
      await reader.cancel(reason)
    } catch {
      // The source failed after the client left: `end` has reported it.
    }
  }

  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        // After a cancel the controller refuses chunks; the copy was already kept by then.
        const quietly = (act: () => void) => {
          try {
            act()
          } catch {}
        }
        pending = step((chunk) => quietly(() => controller.enqueue(chunk))).then(
          (done) => {
            if (done) quietly(() => controller.close())
          },
          (error: unknown) => quietly(() => controller.error(error)),
        )
        return pending
      },
      cancel(reason) {
        // The client left. A body still being kept is read on, in the background, so the
        // result of an operation that ran is stored; otherwise the source is cancelled.
        if (!capturing || ended) return reader.cancel(reason)
        void drain(reason)
        return undefined
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBytes + 1 }),
  )
}
