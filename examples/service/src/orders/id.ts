// Resource ids that are unique across instances and sort in creation order: 48 bits of
// milliseconds and 80 random bits, in Crockford's base32 (the ULID layout). A per-process
// sequence would give two instances the same ids, so a Location replayed from one would name
// another customer's order on the other.

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const RANDOM_BITS = 80n
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n
const TIME_MAX = 2 ** 48 - 1

/** Options of {@link createIdGenerator}: time and randomness are injected (tests fix them). */
export interface IdGeneratorOptions {
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Fills the array with random bytes (default `crypto.getRandomValues`). */
  random?: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
}

/**
 * Makes ids `<prefix>_<26 characters>`: the time part first, so that ids sort (as strings, byte
 * by byte) in the order they were made. Monotonic within a process: an id made in the same
 * millisecond as the previous one (or after the clock stepped back) takes the previous one's
 * time and random part plus one, so it still sorts after it. Across processes, ids of the
 * same millisecond differ by 80 random bits.
 *
 * @example
 * ```ts
 * const nextId = createIdGenerator()
 * nextId('ord') // 'ord_01KB3Q9Z5X4M8T2R7N6W1Y0C3D'
 * ```
 */
export function createIdGenerator(options: IdGeneratorOptions = {}): (prefix: string) => string {
  const clock = options.clock ?? Date.now
  const random = options.random ?? ((bytes) => crypto.getRandomValues(bytes))
  let lastTime = -1
  let lastRandom = 0n
  return (prefix) => {
    let time = Math.floor(clock())
    if (!Number.isSafeInteger(time) || time < 0 || time > TIME_MAX) {
      throw new RangeError(`The clock gave ${time}, not a time an id can carry`)
    }
    let value: bigint
    if (time <= lastTime && lastRandom < RANDOM_MAX) {
      time = lastTime
      value = lastRandom + 1n
    } else {
      // A new millisecond (or, once in 2^80, an exhausted one: the next millisecond).
      if (time <= lastTime) time = lastTime + 1
      value = 0n
      for (const byte of random(new Uint8Array(10))) value = (value << 8n) | BigInt(byte)
    }
    lastTime = time
    lastRandom = value
    return `${prefix}_${encode(BigInt(time), 10)}${encode(value, 16)}`
  }
}

/** `value` in `length` base32 digits, most significant first. */
function encode(value: bigint, length: number): string {
  let text = ''
  let rest = value
  for (let index = 0; index < length; index += 1) {
    text = ALPHABET[Number(rest & 31n)] + text
    rest >>= 5n
  }
  return text
}
