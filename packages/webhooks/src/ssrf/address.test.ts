import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { describe, expect, test } from 'vitest'
import {
  EMBEDDED_IPV4,
  inRanges,
  isRefusedAddress,
  parseCidr,
  REFUSED_IPV4,
  REFUSED_IPV6,
} from './address.ts'

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

  // fast-check stops at 2 s; the timeout leaves room for a loaded machine (2 CPUs, load 9: 5.3 s).
  test('never throws on arbitrary strings', { timeout: 20_000 }, () => {
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

describe('parseCidr', () => {
  test.each([
    ['10.0.0.0/8', '10.0.0.0', 8],
    ['0.0.0.0/0', '0.0.0.0', 0],
    ['192.168.0.0/16', '192.168.0.0', 16],
    ['10.20.30.40/32', '10.20.30.40', 32],
    ['::1/128', '::1', 128],
    ['::/0', '::', 0],
    ['fd12:3456::/32', 'fd12:3456::', 32],
    ['FD12:3456::/32', 'fd12:3456::', 32],
    ['::ffff:10.0.0.0/104', '::ffff:a00:0', 104],
  ])('%s is the range %s/%i', (cidr, base, bits) => {
    const [address, prefix] = parseCidr(cidr)
    expect([address.toString(), prefix]).toEqual([base, bits])
  })

  test.each([
    // The short and odd forms ipaddr.parseCIDR (inet_aton) reads as other ranges.
    ['10/8'],
    ['127/8'],
    ['192.168/16'],
    ['172.16/12'],
    ['010.0.0.0/8'],
    ['0xa000000/8'],
    ['0xa.0.0.0/8'],
    ['167772160/8'],
    // Not a network address: host bits set.
    ['10.0.0.1/8'],
    ['192.168.1.0/16'],
    ['fd00::1/8'],
    // Prefixes.
    ['10.0.0.0/08'],
    ['10.0.0.0/+8'],
    ['10.0.0.0/-1'],
    ['10.0.0.0/33'],
    ['::/129'],
    ['10.0.0.0/'],
    ['10.0.0.0'],
    ['10.0.0.0/8/8'],
    // Anything else.
    ['10.0.0.0/8 '],
    [' 10.0.0.0/8'],
    ['1.2.3.4.5/32'],
    ['fe80::%eth0/64'],
    ['::ffff:010.0.0.0/104'],
    ['localhost/8'],
    [''],
  ])('%j is a TypeError', (cidr) => {
    expect(() => parseCidr(cidr)).toThrow(TypeError)
  })

  test('a short form no longer lets 192.0.0.192 or 0.0.0.0 in: 192.168/16 was 192.0.0.168/16', () => {
    // What ipaddr.parseCIDR made of it: a range holding Oracle Cloud's metadata address.
    expect(inRanges('192.0.0.192', [ipaddr.parseCIDR('192.168/16')])).toBe(true)
    expect(() => parseCidr('192.168/16')).toThrow(TypeError)
    expect(inRanges('192.0.0.192', [parseCidr('192.168.0.0/16')])).toBe(false)
    expect(inRanges('192.168.7.7', [parseCidr('192.168.0.0/16')])).toBe(true)
  })

  test('any four-part decimal network address and prefix round-trips; the same with host bits set throws', () => {
    fc.assert(
      fc.property(v4Bytes, fc.integer({ min: 0, max: 32 }), (bytes, bits) => {
        const address = bytes.join('.')
        const network = ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`).toString()
        const [base, prefix] = parseCidr(`${network}/${bits}`)
        expect([base.toString(), prefix]).toEqual([network, bits])
        expect(inRanges(address, [[base, prefix]])).toBe(true)
        if (network !== address) expect(() => parseCidr(`${address}/${bits}`)).toThrow(TypeError)
      }),
      budget,
    )
  })

  test('any string: a range whose base is its network address, or a TypeError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.tuple(fc.ipV4Extended(), fc.nat({ max: 40 })).map(([a, b]) => `${a}/${b}`),
          fc.tuple(fc.ipV6(), fc.nat({ max: 140 })).map(([a, b]) => `${a}/${b}`),
        ),
        (cidr) => {
          let range: ReturnType<typeof parseCidr>
          try {
            range = parseCidr(cidr)
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError)
            return
          }
          const [base, bits] = range
          const network =
            base.kind() === 'ipv4'
              ? ipaddr.IPv4.networkAddressFromCIDR(`${base.toString()}/${bits}`)
              : ipaddr.IPv6.networkAddressFromCIDR(`${base.toString()}/${bits}`)
          expect(network.toString()).toBe(base.toString())
          // IPv4 is accepted only as written: four-part decimal, no leading zeros.
          if (base.kind() === 'ipv4') expect(cidr).toBe(`${base.toString()}/${bits}`)
        },
      ),
      budget,
    )
  })
})
