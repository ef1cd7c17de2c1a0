import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { IpAddress } from './ip.ts'
import {
  formatIp,
  MAX_IP_TEXT_LENGTH,
  maskIp,
  parseIp,
  parseIpv4,
  parseIpv6,
  unmapIpv4,
} from './ip.ts'

const timeBox = { interruptAfterTimeLimit: 3000, numRuns: 2000 }

const groups = fc.array(
  // zero groups often, so that `::` runs of every length show up
  fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })),
  { minLength: 8, maxLength: 8 },
)
const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 })

/** The WHATWG URL parser as the oracle: it serialises IPv6 hosts per RFC 5952. */
const whatwgIpv6 = (text: string): string | undefined => {
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
}

/** Writes groups the long way, with random case and leading zeros, and `::` anywhere valid. */
const variantText = groups.chain((g) =>
  fc
    .record({
      upper: fc.boolean(),
      pad: fc.boolean(),
      cut: fc.option(fc.tuple(fc.nat(7), fc.integer({ min: 1, max: 8 }))),
    })
    .map(({ upper, pad, cut }) => {
      const hex = g.map((n) => {
        const h = pad ? n.toString(16).padStart(4, '0') : n.toString(16)
        return upper ? h.toUpperCase() : h
      })
      if (cut !== null) {
        const [start, length] = cut
        const end = Math.min(8, start + length)
        if (g.slice(start, end).every((n) => n === 0)) {
          return { g, text: `${hex.slice(0, start).join(':')}::${hex.slice(end).join(':')}` }
        }
      }
      return { g, text: hex.join(':') }
    }),
)

describe('IPv6 text', () => {
  test('formatIp is RFC 5952 canonical (agrees with the WHATWG URL serialiser)', () => {
    fc.assert(
      fc.property(groups, (g) => {
        const text = formatIp({ version: 6, groups: g })
        expect(text).toBe(whatwgIpv6(text))
      }),
      timeBox,
    )
  })

  test('every textual variant parses back to the same groups', () => {
    fc.assert(
      fc.property(variantText, ({ g, text }) => {
        expect(parseIpv6(text)).toEqual(g)
        expect(formatIp({ version: 6, groups: parseIpv6(text)! })).toBe(whatwgIpv6(text))
      }),
      timeBox,
    )
  })

  test('an embedded dotted quad fills the last 32 bits', () => {
    expect(parseIpv6('::ffff:192.0.2.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201])
    expect(parseIpv6('64:ff9b::203.0.113.7')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xcb00, 0x7107])
    expect(parseIpv6('1:2:3:4:5:6:7.8.9.10')).toEqual([1, 2, 3, 4, 5, 6, 0x0708, 0x090a])
  })

  test('text that is not an address is refused (and so is what URL refuses)', () => {
    for (const text of [
      '',
      ':',
      ':::',
      '1::2::3',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::8',
      '12345::',
      'g::',
      ':1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:',
      '1.2.3.4::',
      '::1.2.3',
      '::01.2.3.4',
      '::256.2.3.4',
    ]) {
      expect(parseIpv6(text), text).toBeUndefined()
    }
  })

  test('never throws on arbitrary text, and accepts only what the URL parser accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.') })),
        (text) => {
          const groups = parseIpv6(text)
          if (groups !== undefined) expect(whatwgIpv6(text)).toBe(formatIp({ version: 6, groups }))
        },
      ),
      timeBox,
    )
  })
})

describe('IPv4 text', () => {
  test('dotted quads round trip', () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const text = b.join('.')
        expect(parseIpv4(text)).toEqual(b)
        expect(formatIp({ version: 4, bytes: parseIpv4(text)! })).toBe(text)
      }),
      timeBox,
    )
  })

  test('leading zeros (octal to inet_aton), short forms and junk are refused', () => {
    for (const text of [
      '010.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '1.2.3.-4',
      '0x7f.0.0.1',
      '1..2.3',
      ' 1.2.3.4',
    ]) {
      expect(parseIpv4(text), text).toBeUndefined()
    }
  })
})

describe('parseIp, unmapIpv4, maskIp', () => {
  test('brackets and zone identifiers are removed; IPv4-mapped becomes IPv4', () => {
    expect(parseIp('[2001:db8::1]')).toEqual({
      version: 6,
      groups: [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1],
    })
    expect(parseIp('fe80::1%eth0')).toEqual({ version: 6, groups: [0xfe80, 0, 0, 0, 0, 0, 0, 1] })
    expect(unmapIpv4(parseIp('::ffff:203.0.113.7')!)).toEqual({
      version: 4,
      bytes: [203, 0, 113, 7],
    })
    expect(unmapIpv4(parseIp('::FFFF:cb00:7107')!)).toEqual({ version: 4, bytes: [203, 0, 113, 7] })
    // not mapped: ::1 and the NAT64 prefix stay IPv6
    expect(unmapIpv4(parseIp('::1')!).version).toBe(6)
    expect(unmapIpv4(parseIp('64:ff9b::203.0.113.7')!).version).toBe(6)
  })

  test('text longer than the limit is not an address', () => {
    const padded = `${' '.repeat(MAX_IP_TEXT_LENGTH - 3)}::1`
    expect(parseIp(padded)).toEqual({ version: 6, groups: [0, 0, 0, 0, 0, 0, 0, 1] })
    expect(parseIp(` ${padded}`)).toBeUndefined()
  })

  test('masking keeps exactly the prefix bits and clears the rest', () => {
    const address = fc.oneof(
      groups.map((g): IpAddress => ({ version: 6, groups: g })),
      bytes.map((b): IpAddress => ({ version: 4, bytes: b })),
    )
    fc.assert(
      fc.property(address, fc.integer({ min: 0, max: 128 }), (ip, rawPrefix) => {
        const width = ip.version === 4 ? 8 : 16
        const units = ip.version === 4 ? ip.bytes : ip.groups
        const prefix = Math.min(rawPrefix, units.length * width)
        const masked = maskIp(ip, prefix)
        const out = masked.version === 4 ? masked.bytes : masked.groups
        const bits = (values: readonly number[]) =>
          values.map((v) => v.toString(2).padStart(width, '0')).join('')
        expect(bits(out).slice(0, prefix)).toBe(bits(units).slice(0, prefix))
        expect(bits(out).slice(prefix)).toMatch(/^0*$/)
        expect(maskIp(masked, prefix)).toEqual(masked)
      }),
      timeBox,
    )
  })

  test('an example /56: 2001:db8:1:2a3::7 belongs to 2001:db8:1:200::', () => {
    expect(formatIp(maskIp(parseIp('2001:db8:1:2a3::7')!, 56))).toBe('2001:db8:1:200::')
    expect(formatIp(maskIp(parseIp('203.0.113.77')!, 24))).toBe('203.0.113.0')
  })
})
