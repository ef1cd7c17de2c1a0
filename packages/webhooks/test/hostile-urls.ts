// Receiver URLs the SSRF guard must refuse (docs/spec.md §4.4), as data: the forms of
// loopback, private and metadata addresses an attacker can write (the WHATWG URL parser reads
// decimal, octal, hexadecimal and short IPv4 forms, percent-encoding and IDNA full stops in a
// host), the IPv6 forms that carry them, names that resolve to them, credentials and fragment
// tricks, and other schemes. Several are from the bypass fixture of ssrf-req-filter
// (test/fixtures/blockedUrls.js) and the PayloadsAllTheThings SSRF list.
import type { LookupAddress } from 'node:dns'
import type { WebhookErrorCode } from '../src/error.ts'

export interface HostileUrl {
  url: string
  /** What `checkUrl` rejects it with. */
  code: Extract<WebhookErrorCode, 'URL_REFUSED' | 'URL_INVALID'>
  /**
   * Whether its host is refused when it is dialled, so a request through the dispatcher must
   * fail with the guard's refusal (false for other schemes and tricks whose host is public).
   */
  atConnect: boolean
  why: string
}

const refused = (url: string, why: string): HostileUrl => ({
  url,
  code: 'URL_REFUSED',
  atConnect: true,
  why,
})
const invalid = (url: string, why: string, atConnect = false): HostileUrl => ({
  url,
  code: 'URL_INVALID',
  atConnect,
  why,
})

/** What the names in the table resolve to (the tests' injected `lookup`). */
export const hostileNames: Readonly<Record<string, readonly LookupAddress[]>> = {
  'loopback.attacker.test': [{ address: '127.0.0.1', family: 4 }],
  '127.0.0.1.nip.io': [{ address: '127.0.0.1', family: 4 }],
  'metadata.google.internal': [{ address: '169.254.169.254', family: 4 }],
  'metadata.goog': [{ address: '169.254.169.254', family: 4 }],
  'instance-data': [{ address: '169.254.169.254', family: 4 }],
  'private.attacker.test': [{ address: '10.1.2.3', family: 4 }],
  // One public and one private answer: every address is checked, not the first.
  'mixed.attacker.test': [
    { address: '93.184.215.14', family: 4 },
    { address: '192.168.0.10', family: 4 },
  ],
  'v6-loopback.attacker.test': [{ address: '::1', family: 6 }],
  'mapped.attacker.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'nat64.attacker.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'ula.attacker.test': [{ address: 'fd00:ec2::254', family: 6 }],
  // Public names, for the tricks whose refusal is syntactic.
  'public.example.test': [{ address: '93.184.215.14', family: 4 }],
}

export const hostileUrls: readonly HostileUrl[] = [
  // Loopback in every IPv4 spelling the URL parser accepts.
  refused('http://127.0.0.1/', 'loopback'),
  refused('http://127.1/', 'short form'),
  refused('http://127.0.1/', 'short form, three parts'),
  refused('http://2130706433/', 'decimal'),
  refused('http://0x7f000001/', 'hexadecimal'),
  refused('http://0x7f.1/', 'hexadecimal, short'),
  refused('http://0x7f.0x0.0x0.0x1/', 'hexadecimal parts'),
  refused('http://0177.0.0.1/', 'octal'),
  refused('http://0177.1/', 'octal, short'),
  refused('http://017700000001/', 'octal, whole'),
  refused('http://127.000.000.001/', 'zero-padded'),
  refused('http://127.255.255.254/', 'the top of 127/8'),
  refused('http://127.0.0.1./', 'trailing dot'),
  refused('http://127.0.0.1%2e/', 'percent-encoded trailing dot'),
  refused('http://%31%32%37.0.0.1/', 'percent-encoded host'),
  refused('http://127\u30020\u30020\u30021/', 'ideographic full stops (IDNA)'),
  refused('http://\u2460\u2461\u2466.0.0.1/', 'circled digits (IDNA)'),
  refused('http://127.0.0.1:22/', 'loopback, another port'),
  refused('http://0/', '0.0.0.0, decimal'),
  refused('http://0.0.0.0/', '"this network"'),
  // Private, shared and special-purpose IPv4.
  refused('http://10.0.0.1/', 'RFC 1918'),
  refused('http://172.16.0.1/', 'RFC 1918'),
  refused('http://172.31.255.255/', 'RFC 1918, top'),
  refused('http://192.168.1.1/', 'RFC 1918'),
  refused('http://0xc0a80101/', 'RFC 1918, hexadecimal'),
  refused('http://3232235777/', 'RFC 1918, decimal'),
  refused('http://100.64.0.1/', 'CGNAT'),
  refused('http://192.0.2.1/', 'documentation'),
  refused('http://198.18.0.1/', 'benchmarking'),
  refused('http://224.0.0.1/', 'multicast'),
  refused('http://240.0.0.1/', 'reserved'),
  refused('http://255.255.255.255/', 'limited broadcast'),
  // Cloud metadata.
  refused('http://169.254.169.254/latest/meta-data/', 'AWS, GCP, Azure, OCI metadata'),
  refused('http://0xa9fea9fe/latest/meta-data/', 'metadata, hexadecimal'),
  refused('http://2852039166/latest/meta-data/', 'metadata, decimal'),
  refused('http://0251.0376.0251.0376/', 'metadata, octal'),
  refused('http://169.254.170.2/v2/credentials', 'AWS ECS task metadata'),
  refused('http://[fd00:ec2::254]/latest/meta-data/', 'AWS IMDS over IPv6'),
  refused('http://[fd00:ec2::23]/', 'AWS EKS Pod Identity'),
  refused('http://[fd20:ce::254]/', 'GCP metadata over IPv6'),
  refused('http://100.100.100.200/latest/meta-data/', 'Alibaba Cloud metadata'),
  refused('http://168.63.129.16/machine?comp=goalstate', 'Azure WireServer'),
  refused('http://192.0.0.192/', 'Oracle Cloud Classic metadata'),
  refused('http://[::ffff:169.254.169.254]/', 'metadata, IPv4-mapped'),
  refused('http://[64:ff9b::169.254.169.254]/', 'metadata, NAT64'),
  refused('http://[2002:a9fe:a9fe::]/', 'metadata, 6to4'),
  // IPv6 loopback, and IPv4 loopback carried in IPv6.
  refused('http://[::1]/', 'IPv6 loopback'),
  refused('http://[0:0:0:0:0:0:0:1]/', 'IPv6 loopback, long form'),
  refused('http://[::]/', 'unspecified'),
  refused('http://[::ffff:127.0.0.1]/', 'IPv4-mapped, dotted'),
  refused('http://[::ffff:7f00:1]/', 'IPv4-mapped, hexadecimal'),
  refused('http://[0:0:0:0:0:ffff:127.0.0.1]/', 'IPv4-mapped, long form'),
  refused('http://[::127.0.0.1]/', 'IPv4-compatible'),
  refused('http://[64:ff9b::127.0.0.1]/', 'NAT64, dotted'),
  refused('http://[64:ff9b::7f00:1]/', 'NAT64, hexadecimal'),
  refused('http://[64:ff9b:1::a00:1]/', 'local-use NAT64'),
  refused('http://[2002:7f00:1::]/', '6to4 of loopback'),
  refused('http://[2002:c0a8:101::1]/', '6to4 of 192.168.1.1'),
  // Other non-global IPv6.
  refused('http://[fe80::1]/', 'link-local'),
  refused('http://[fc00::1]/', 'unique local'),
  refused('http://[fec0::1]/', 'site-local'),
  refused('http://[ff02::1]/', 'multicast'),
  refused('http://[2001:db8::1]/', 'documentation'),
  refused('http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'Teredo'),
  refused('http://[100::1]/', 'discard-only'),
  // Names.
  refused('http://localhost/', 'localhost'),
  refused('http://LOCALHOST/', 'localhost, upper case'),
  refused('http://localhost./', 'localhost, trailing dot'),
  refused('http://api.localhost/', 'a name under localhost'),
  refused('http://loopback.attacker.test/', 'a name that resolves to loopback'),
  refused('http://127.0.0.1.nip.io/', 'a wildcard DNS name of loopback'),
  refused('http://metadata.google.internal/computeMetadata/v1/', 'GCP metadata name'),
  refused('http://metadata.goog/', 'GCP metadata name'),
  refused('http://instance-data/latest/', 'AWS metadata name'),
  refused('http://private.attacker.test/', 'a name that resolves to RFC 1918'),
  refused('http://mixed.attacker.test/', 'one public and one private address'),
  refused('http://v6-loopback.attacker.test/', 'a name that resolves to ::1'),
  refused('http://mapped.attacker.test/', 'a name that resolves to IPv4-mapped loopback'),
  refused('http://nat64.attacker.test/', 'a name that resolves to NAT64 metadata'),
  refused('http://ula.attacker.test/', 'a name that resolves to AWS IMDS over IPv6'),
  refused('https://127.0.0.1/', 'https to loopback'),
  refused('http://127.0.0.1\\@public.example.test/', 'backslash: the host is 127.0.0.1'),
  // Credentials and fragments.
  invalid('http://user:pass@127.0.0.1/', 'credentials', true),
  invalid('http://public.example.test@127.0.0.1/', 'the host after @ is loopback', true),
  invalid('http://127.0.0.1#@public.example.test/', 'the host before # is loopback', true),
  invalid('http://public.example.test#@127.0.0.1/', 'a fragment'),
  invalid('http://[::1]#@public.example.test/', 'IPv6 loopback before #', true),
  // Not http.
  invalid('file:///etc/passwd', 'file'),
  invalid('gopher://127.0.0.1:6379/_INFO', 'gopher'),
  invalid('ftp://127.0.0.1/', 'ftp'),
  invalid('dict://127.0.0.1:11211/stat', 'dict'),
  invalid('ldap://127.0.0.1/', 'ldap'),
  invalid('ws://127.0.0.1/', 'ws'),
  invalid('javascript:alert(1)', 'javascript'),
  invalid('data:text/plain,hi', 'data'),
  invalid('/relative/path', 'relative'),
  invalid('http://', 'no host'),
  invalid(`https://public.example.test/${'a'.repeat(2100)}`, 'over 2,048 characters'),
]
