/**
 * Where `MemoryIdempotencyStore` keeps the stored bodies, and how much memory they hold.
 *
 * A body of up to {@link SHARED_MAX} bytes is copied into a shared block of
 * {@link BLOCK_BYTES}, as Node's Buffer pool does, instead of an ArrayBuffer of its own: a
 * buffer per record costs several times the copy in allocation and garbage collection (about
 * 0.6 µs against 0.2 µs per 300-byte body, kept among 10,000 records). A block is freed with
 * the last record in it. Larger bodies get a buffer of their own.
 *
 * The memory held is counted honestly: a block counts whole, all {@link BLOCK_BYTES} of it, from
 * when it is made until it is neither the block being filled nor holding a record, however few
 * bytes of it are in use. One long-lived record among short-lived ones keeps its whole block,
 * and is counted for it. So `maxBytes` bounds the memory really held, and blocks are used only
 * where they are a small part of it (`maxBytes` of at least 64 blocks); below that every body
 * has its own buffer.
 *
 * @module
 */

/** The size of a shared block. */
export const BLOCK_BYTES = 8192
/** The largest body copied into a shared block. */
export const SHARED_MAX = 2048
/** The smallest `maxBytes` with shared blocks. */
export const MIN_BYTES_FOR_BLOCKS: number = 64 * BLOCK_BYTES

const EMPTY = new Uint8Array(0)

/** A shared block: its bytes, how many of them are taken, how many records hold a slice. */
interface Block {
  readonly bytes: Uint8Array
  used: number
  records: number
}

/** What holds a stored body: a record of the store. */
export interface BodyHolder {
  body: Uint8Array | undefined
  block: Block | undefined
}

/** The bodies of one store and the bytes they hold. */
export class BodyBlocks {
  readonly #shared: boolean
  #current: Block | undefined
  #bytes = 0

  /** `maxBytes`: the store's bound; blocks only when it is at least {@link MIN_BYTES_FOR_BLOCKS}. */
  constructor(maxBytes: number) {
    this.#shared = maxBytes >= MIN_BYTES_FOR_BLOCKS
  }

  /** The bytes the bodies hold: own buffers by their length, blocks whole. */
  get bytes(): number {
    return this.#bytes
  }

  /** How many more bytes {@link BodyBlocks.hold} of a body of `length` bytes would hold, at most. */
  growth(length: number): number {
    if (!this.#shares(length)) return length
    const current = this.#current
    if (current === undefined) return BLOCK_BYTES
    if (current.used + length <= BLOCK_BYTES) return 0
    // A new block; the one it replaces goes when no record holds a slice of it.
    return current.records === 0 ? 0 : BLOCK_BYTES
  }

  /** Copies `body` for `holder`: into the current block (or a new one), or a buffer of its own. */
  hold(holder: BodyHolder, body: Uint8Array): void {
    const length = body.byteLength
    if (!this.#shares(length)) {
      holder.body = length === 0 ? EMPTY : new Uint8Array(body)
      holder.block = undefined
      this.#bytes += length
      return
    }
    let block = this.#current
    if (block === undefined || block.used + length > BLOCK_BYTES) {
      if (block !== undefined && block.records === 0) this.#bytes -= BLOCK_BYTES
      block = { bytes: new Uint8Array(BLOCK_BYTES), used: 0, records: 0 }
      this.#current = block
      this.#bytes += BLOCK_BYTES
    }
    const copy = block.bytes.subarray(block.used, block.used + length)
    copy.set(body)
    block.used += length
    block.records++
    holder.body = copy
    holder.block = block
  }

  /** Lets go of `holder`'s body (its record is gone or no longer holds one). */
  drop(holder: BodyHolder): void {
    const { body, block } = holder
    if (body === undefined) return
    if (block === undefined) this.#bytes -= body.byteLength
    else if (--block.records === 0 && block !== this.#current) this.#bytes -= BLOCK_BYTES
    holder.body = undefined
    holder.block = undefined
  }

  #shares(length: number): boolean {
    return this.#shared && length > 0 && length <= SHARED_MAX
  }
}
