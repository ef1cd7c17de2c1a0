/**
 * Whether a web ReadableStream was read from or cancelled (Fetch "disturbed"), which is what
 * `bodyUsed` reports. node:stream's `Readable.isDisturbed` accepts web streams; its types
 * only name node streams.
 *
 * @module
 */
import { Readable } from 'node:stream'

const check = Readable.isDisturbed as unknown as (stream: ReadableStream) => boolean

/** Whether `stream` was read from or cancelled. */
export function isDisturbed(stream: ReadableStream): boolean {
  return check(stream)
}
