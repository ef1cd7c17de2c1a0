/**
 * Examples published in RFC 9110 (HTTP Semantics, June 2022), kept verbatim as test data.
 * Source: https://www.rfc-editor.org/rfc/rfc9110 — the section is given with each group.
 */

/** §8.8.3.2, "Comparison": the table of strong and weak comparison results. */
export const comparisonTable: readonly {
  a: string
  b: string
  strong: boolean
  weak: boolean
}[] = [
  { a: 'W/"1"', b: 'W/"1"', strong: false, weak: true },
  { a: 'W/"1"', b: 'W/"2"', strong: false, weak: false },
  { a: 'W/"1"', b: '"1"', strong: false, weak: true },
  { a: '"1"', b: '"1"', strong: true, weak: true },
]

/** §8.8.3, "ETag": the field value examples. */
export const etagExamples: readonly { value: string; weak: boolean; opaque: string }[] = [
  { value: '"xyzzy"', weak: false, opaque: 'xyzzy' },
  { value: 'W/"xyzzy"', weak: true, opaque: 'xyzzy' },
  { value: '""', weak: false, opaque: '' },
]

/** §13.1.1, "If-Match": the field value examples. */
export const ifMatchExamples: readonly string[] = [
  '"xyzzy"',
  '"xyzzy", "r2d2xxxx", "c3piozzzz"',
  '*',
]

/** §13.1.2, "If-None-Match": the field value examples. */
export const ifNoneMatchExamples: readonly string[] = [
  '"xyzzy"',
  'W/"xyzzy"',
  '"xyzzy", "r2d2xxxx", "c3piozzzz"',
  'W/"xyzzy", W/"r2d2xxxx", W/"c3piozzzz"',
  '*',
]

/**
 * §5.6.7, "Date/Time Formats": the same instant in the preferred format and the two obsolete
 * ones, 1994-11-06T08:49:37Z.
 */
export const httpDateExamples: readonly { format: string; value: string }[] = [
  { format: 'IMF-fixdate', value: 'Sun, 06 Nov 1994 08:49:37 GMT' },
  { format: 'obsolete RFC 850 format', value: 'Sunday, 06-Nov-94 08:49:37 GMT' },
  { format: "ANSI C's asctime() format", value: 'Sun Nov  6 08:49:37 1994' },
]

/** The instant of {@link httpDateExamples}, in ms since the epoch. */
export const httpDateExampleTime: number = Date.UTC(1994, 10, 6, 8, 49, 37)

/** §13.1.3 and §13.1.4: the If-Modified-Since / If-Unmodified-Since example value. */
export const conditionalDateExample = 'Sat, 29 Oct 1994 19:43:31 GMT'

/** §8.8.2, "Last-Modified": the field value example. */
export const lastModifiedExample = 'Tue, 15 Nov 1994 12:45:26 GMT'
