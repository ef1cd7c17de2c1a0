import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { describe, expect, test } from 'vitest'
import { EMBEDDED_IPV4, isRefusedAddress, REFUSED_IPV4, REFUSED_IPV6 } from './address.ts'

const budget = { interruptAfterTimeLimit: 2000, numRuns: 500 }

/** A random address inside `cidr`: its prefix bits, then random bits. */
function inside(cidr: string) {
  const [base, bits] = ipaddr.parseCIDR(cidr)
  const prefix = base.toByteArray()
  return fc
    .array(fc.integer({ min: 0, max: 255 }), {
      minLength: prefix.length,
      maxLength: prefix.length,
    })
    .map((random) => {
      const bytes = prefix.map((byte, index) => {
        const kept = Math.max(0, Math.min(8, bits - index * 8))
        const mask = (0xff << (8 - kept)) & 0xff
        return (byte & mask) | (random[index]! & ~mask & 0xff)
      })
      return ipaddr.fromByteArray(bytes).toString()
    })
}

const v4Bytes = fc.tuple(
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
)
const hex = (high: number, low: number) => ((high << 8) | low).toString(16)

describe('isRefusedAddress', () => {
  test.each([
    ['127.0.0.1'],
    ['10.0.0.1'],
    ['172.16.5.4'],
    ['192.168.0.1'],
    ['100.100.100.200'],
    ['169.254.169.254'],
    ['169.254.170.2'],
    ['168.63.129.16'],
    ['192.0.0.192'],
    ['0.0.0.0'],
    ['255.255.255.255'],
    ['::'],
    ['::1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:7f00:1'],
    ['::ffff:a9fe:a9fe'],
    ['::7f00:1'],
    ['64:ff9b::7f00:1'],
    ['64:ff9b::a9fe:a9fe'],
    ['64:ff9b:1::808:808'],
    ['2002:7f00:1::'],
    ['2002:a9fe:a9fe::1'],
    ['fd00:ec2::254'],
    ['fd00:ec2::23'],
    ['fd20:ce::254'],
    ['fe80::1'],
    ['fe80::1%eth0'],
    ['fec0::1'],
    ['ff02::1'],
    ['100::1'],
    ['2001::1'],
    ['2001:db8::1'],
    ['3fff::1'],
    ['5f00::1'],
    ['4000::1'],
    ['::ffff:0:7f00:1'],
  ])('MUST refuse %s', (address) => {
    expect(isRefusedAddress(address)).toBe(true)
  })

  test.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['93.184.215.14'],
    ['168.63.129.17'],
    ['2606:4700:4700::1111'],
    ['2001:4860:4860::8888'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::808:808'],
    ['2002:808:808::1'],
  ])('allows the public address %s', (address) => {
    expect(isRefusedAddress(address)).toBe(false)
  })

  test.each([
    [''],
    ['localhost'],
    ['example.com'],
    ['[::1]'],
    [' 8.8.8.8'],
    ['8.8.8.8 '],
    ['1.2.3.4.5'],
    ['256.0.0.1'],
    ['8.8.8.8/32'],
  ])('refuses %j, which is not an address', (address) => {
    expect(isRefusedAddress(address)).toBe(true)
  })

  test('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.ipV4Extended(),
          fc.ipV6(),
          fc.stringMatching(/^[0-9a-fA-Fx:.%]{0,50}$/),
        ),
        (address) => {
          expect(typeof isRefusedAddress(address)).toBe('boolean')
        },
      ),
      budget,
    )
  })

  test.each([...REFUSED_IPV4, ...REFUSED_IPV6])(
    'MUST refuse every address of $cidr ($name, $reference)',
    ({ cidr }) => {
      fc.assert(
        fc.property(inside(cidr), (address) => {
          expect(isRefusedAddress(address)).toBe(true)
        }),
        { ...budget, numRuns: 200 },
      )
    },
  )

  test('MUST refuse every address ipaddr.js does not class unicast', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        const parsed = ipaddr.parse(address)
        if (parsed.range() !== 'unicast' && !isEmbedding(address)) {
          expect(isRefusedAddress(address)).toBe(true)
        }
      }),
      budget,
    )
  })

  test('MUST refuse IPv6 outside 2000::/3 (not global unicast) unless it carries IPv4', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const parsed = ipaddr.IPv6.parse(address)
        if (!parsed.match(ipaddr.parseCIDR('2000::/3')) && !isEmbedding(address)) {
          expect(isRefusedAddress(address)).toBe(true)
        }
      }),
      budget,
    )
  })

  test('MUST judge every IPv6 form of an IPv4 address as the IPv4 address', () => {
    fc.assert(
      fc.property(v4Bytes, ([a, b, c, d]) => {
        const v4 = `${a}.${b}.${c}.${d}`
        const expected = isRefusedAddress(v4)
        const forms = [
          `::ffff:${v4}`, // mapped, dotted
          `::ffff:${hex(a, b)}:${hex(c, d)}`, // mapped, hexadecimal
          `0:0:0:0:0:ffff:${v4}`,
          `::${v4}`, // compatible
          `64:ff9b::${v4}`, // NAT64
          `64:ff9b::${hex(a, b)}:${hex(c, d)}`,
          `2002:${hex(a, b)}:${hex(c, d)}::1`, // 6to4
          `2002:${hex(a, b)}:${hex(c, d)}:ffff::`,
        ]
        for (const form of forms) expect([form, isRefusedAddress(form)]).toEqual([form, expected])
      }),
      budget,
    )
  })

  test('the unwrapped prefixes are exactly the ones of the table', () => {
    expect(EMBEDDED_IPV4.map((prefix) => prefix.cidr)).toEqual([
      '::ffff:0:0/96',
      '64:ff9b::/96',
      '2002::/16',
      '::/96',
    ])
  })
})

function isEmbedding(address: string): boolean {
  const parsed = ipaddr.parse(address)
  return (
    parsed.kind() === 'ipv6' &&
    EMBEDDED_IPV4.some((prefix) => parsed.match(ipaddr.parseCIDR(prefix.cidr)))
  )
}
