/**
 * Published examples, kept as data.
 *
 * - RFC 9651 (Structured Field Values for HTTP), §3.1 and §3.1.2 examples:
 *   https://www.rfc-editor.org/rfc/rfc9651#section-3.1
 * - draft-ietf-httpapi-ratelimit-headers-10, §3.2 and §4.2 examples:
 *   https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */

/** List field values that are valid, with the number of members each holds. */
export const validLists: readonly { source: string; value: string; members: number }[] = [
  { source: 'RFC 9651 §3.1', value: 'sugar, tea, rum', members: 3 },
  { source: 'RFC 9651 §3.1.1', value: '("foo" "bar"), ("baz"), ("bat" "one"), ()', members: 4 },
  { source: 'RFC 9651 §3.1.1', value: '("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1', members: 2 },
  { source: 'RFC 9651 §3.1.2', value: 'abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w', members: 2 },
  { source: 'draft -10 §3', value: '"burst";q=100;w=60,"daily";q=1000;w=86400', members: 2 },
  { source: 'draft -10 §3.2', value: '"peruser";q=100;w=60;pk=:cHsdsRa894==:', members: 1 },
  {
    source: 'draft -10 §3.2',
    value: '"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:',
    members: 1,
  },
  { source: 'draft -10 §4.2', value: '"default";r=50;t=30', members: 1 },
  { source: 'draft -10 §4.2', value: '"default";r=999;pk=:dHJpYWwxMjEzMjM=:', members: 1 },
  { source: 'draft -10 §4.2', value: '"default";r=300000000;t=60;pk=:QXBwLTk5OQ==:', members: 1 },
]

/** List field values that RFC 9651 §4.2 says must fail to parse. */
export const invalidLists: readonly { why: string; value: string }[] = [
  { why: 'a trailing comma', value: 'a, b,' },
  { why: 'an empty member', value: 'a,,b' },
  { why: 'an unterminated string', value: '"abc' },
  { why: 'a bad escape in a string', value: '"a\\b"' },
  { why: 'a non-ASCII character in a string', value: '"é"' },
  { why: 'an upper-case parameter key', value: 'a;Q=1' },
  { why: 'an integer of 16 digits', value: '1234567890123456' },
  { why: 'a decimal with four fraction digits', value: '1.2345' },
  { why: 'a decimal ending in a dot', value: '1.' },
  { why: 'an unterminated inner list', value: '(a b' },
  { why: 'a boolean other than ?0 or ?1', value: '?2' },
  { why: 'upper-case hex in a display string', value: '%"%C3%A9"' },
  { why: 'invalid UTF-8 in a display string', value: '%"%ff"' },
  { why: 'two items without a comma', value: 'a b' },
  { why: 'a leading tab', value: '\ta' },
]
