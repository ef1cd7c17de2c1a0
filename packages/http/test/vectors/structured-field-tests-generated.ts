/**
 * The generated part of the httpwg structured-field-tests suite: a port of its `generate.py`
 * (https://github.com/httpwg/structured-field-tests at commit
 * 1e280c3ed9ffe0ca5fdb1d97219dddc389007677; BSD 3-Clause licence, Copyright (c) 2018- IETF
 * Trust and the persons identified as authors of the code). The script writes about 700 KB of
 * JSON (`*-generated.json`); this port makes the same records, in the format of
 * structured-field-tests.ts (a whole decimal as `{ __type: 'decimal' }`), section by section
 * and in the same order. When it was written, its output was compared with the suite's files
 * at that commit, record for record, and was equal.
 */
import type { StructuredFieldTest } from './structured-field-tests.ts'

type Test = StructuredFieldTest & { expected?: unknown }

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)
const chr = (c: number): string => String.fromCharCode(c)
const hex = (c: number): string => `0x${c.toString(16).padStart(2, '0')}`
const token = (value: string) => ({ __type: 'token', value })

const ALL_CHARS = range(0x00, 0x7f)
const WHITESPACE = [0x20]
const DIGITS = range(0x30, 0x39)
const LCALPHA = range(0x61, 0x7a)
const UCALPHA = range(0x41, 0x5a)
const ALPHA = [...LCALPHA, ...UCALPHA]
const codes = (chars: string): number[] => [...chars].map((c) => c.charCodeAt(0))

const allowedStringChars = [0x20, 0x21, ...range(0x23, 0x5b), ...range(0x5d, 0x7e)]
const escapedStringChars = [0x22, 0x5c]
const allowedTokenChars = [...DIGITS, ...ALPHA, ...codes(":/!#$%&'*+-.^_`|~")]
const allowedTokenStartChars = [...ALPHA, 0x2a]
const allowedKeyChars = [...DIGITS, ...LCALPHA, ...codes('_-.*')]
const allowedKeyStartChars = [...LCALPHA, 0x2a]

/** `string-generated.json` */
function strings(): Test[] {
  const tests: Test[] = []
  for (const c of ALL_CHARS) {
    const test: Test = { name: `${hex(c)} in string`, raw: [`" ${chr(c)} "`], header_type: 'item' }
    tests.push(
      allowedStringChars.includes(c)
        ? { ...test, expected: [` ${chr(c)} `, []] }
        : { ...test, must_fail: true },
    )
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `Escaped ${hex(c)} in string`,
      raw: [`"\\${chr(c)}"`],
      header_type: 'item',
    }
    tests.push(
      escapedStringChars.includes(c)
        ? { ...test, expected: [chr(c), []] }
        : { ...test, must_fail: true },
    )
  }
  return tests
}

/** `serialisation-tests/string-generated.json` */
function stringSerialisation(): Test[] {
  return ALL_CHARS.filter(
    (c) => !allowedStringChars.includes(c) && !escapedStringChars.includes(c),
  ).map((c) => ({
    name: `${hex(c)} in string - serialise only`,
    expected: [chr(c), []],
    header_type: 'item',
    must_fail: true,
  }))
}

/** `token-generated.json` */
function tokens(): Test[] {
  const tests: Test[] = []
  for (const c of ALL_CHARS) {
    const test: Test = { name: `${hex(c)} in token`, raw: [`a${chr(c)}a`], header_type: 'item' }
    if (allowedTokenChars.includes(c)) tests.push({ ...test, expected: [token(`a${chr(c)}a`), []] })
    else if (c === 0x3b) tests.push({ ...test, expected: [token('a'), [['a', true]]] })
    else tests.push({ ...test, must_fail: true })
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} starting a token`,
      raw: [`${chr(c)}a`],
      header_type: 'item',
    }
    if (WHITESPACE.includes(c))
      tests.push({ ...test, expected: [token('a'), []], canonical: ['a'] })
    else if (allowedTokenStartChars.includes(c)) {
      tests.push({ ...test, expected: [token(`${chr(c)}a`), []] })
    } else tests.push({ ...test, must_fail: true })
  }
  return tests
}

/** `serialisation-tests/token-generated.json` */
function tokenSerialisation(): Test[] {
  return [
    ...ALL_CHARS.filter((c) => !allowedTokenChars.includes(c)).map(
      (c): Test => ({
        name: `${hex(c)} in token - serialise only`,
        header_type: 'item',
        expected: [token(`a${chr(c)}a`), []],
        must_fail: true,
      }),
    ),
    ...ALL_CHARS.filter((c) => !allowedTokenStartChars.includes(c)).map(
      (c): Test => ({
        name: `${hex(c)} starting a token - serialise only`,
        header_type: 'item',
        expected: [token(`${chr(c)}a`), []],
        must_fail: true,
      }),
    ),
  ]
}

/** `key-generated.json` */
function keys(): Test[] {
  const tests: Test[] = []
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} as a single-character dictionary key`,
      raw: [`${chr(c)}=1`],
      header_type: 'dictionary',
    }
    if (WHITESPACE.includes(c)) tests.push({ ...test, raw: ['=1'], must_fail: true })
    else if (allowedKeyStartChars.includes(c))
      tests.push({ ...test, expected: [[chr(c), [1, []]]] })
    else tests.push({ ...test, must_fail: true })
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} in dictionary key`,
      raw: [`a${chr(c)}a=1`],
      header_type: 'dictionary',
    }
    if (c === 0x2c) tests.push({ ...test, expected: [['a', [1, []]]], canonical: ['a=1'] })
    else if (c === 0x3b) tests.push({ ...test, expected: [['a', [true, [['a', 1]]]]] })
    else if (allowedKeyChars.includes(c)) {
      tests.push({ ...test, expected: [[`a${chr(c)}a`, [1, []]]] })
    } else tests.push({ ...test, must_fail: true })
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} starting a dictionary key`,
      raw: [`${chr(c)}a=1`],
      header_type: 'dictionary',
    }
    if (WHITESPACE.includes(c)) {
      tests.push({ ...test, expected: [['a', [1, []]]], canonical: ['a=1'] })
    } else if (allowedKeyStartChars.includes(c)) {
      tests.push({ ...test, expected: [[`${chr(c)}a`, [1, []]]] })
    } else tests.push({ ...test, must_fail: true })
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} in parameterised list key`,
      raw: [`foo; a${chr(c)}a=1`],
      header_type: 'list',
    }
    if (c === 0x3b) {
      tests.push({ ...test, expected: [[token('foo'), [['a', 1]]]], canonical: ['foo;a=1'] })
    } else if (allowedKeyChars.includes(c)) {
      tests.push({
        ...test,
        expected: [[token('foo'), [[`a${chr(c)}a`, 1]]]],
        canonical: [`foo;a${chr(c)}a=1`],
      })
    } else tests.push({ ...test, must_fail: true })
  }
  for (const c of ALL_CHARS) {
    const test: Test = {
      name: `${hex(c)} starting a parameterised list key`,
      raw: [`foo; ${chr(c)}a=1`],
      header_type: 'list',
    }
    if (WHITESPACE.includes(c)) {
      tests.push({ ...test, expected: [[token('foo'), [['a', 1]]]], canonical: ['foo;a=1'] })
    } else if (allowedKeyStartChars.includes(c)) {
      tests.push({
        ...test,
        expected: [[token('foo'), [[`${chr(c)}a`, 1]]]],
        canonical: [`foo;${chr(c)}a=1`],
      })
    } else tests.push({ ...test, must_fail: true })
  }
  return tests
}

/** `serialisation-tests/key-generated.json` */
function keySerialisation(): Test[] {
  const tests: Test[] = []
  const bad = (allowed: number[]) => ALL_CHARS.filter((c) => !allowed.includes(c))
  for (const c of bad(allowedKeyChars)) {
    tests.push({
      name: `${hex(c)} in dictionary key - serialise only`,
      expected: [[`a${chr(c)}a`, [1, []]]],
      header_type: 'dictionary',
      must_fail: true,
    })
  }
  for (const c of bad(allowedKeyStartChars)) {
    tests.push({
      name: `${hex(c)} starting a dictionary key - serialise only`,
      header_type: 'dictionary',
      expected: [[`${chr(c)}a`, [1, []]]],
      must_fail: true,
    })
  }
  for (const c of bad(allowedKeyChars)) {
    tests.push({
      name: `${hex(c)} in parameterised list key - serialise only`,
      header_type: 'list',
      expected: [[token('foo'), [[`a${chr(c)}a`, 1]]]],
      must_fail: true,
    })
  }
  for (const c of bad(allowedKeyStartChars)) {
    tests.push({
      name: `${hex(c)} starting a parameterised list key`,
      header_type: 'list',
      expected: [[token('foo'), [[`${chr(c)}a`, 1]]]],
      must_fail: true,
    })
  }
  return tests
}

/** `large-generated.json`: the minimum sizes RFC 9651 §3 asks parsers to support. */
function large(): Test[] {
  const members = range(0, 1023)
  const params = range(0, 255)
  const key = 'a'.repeat(64)
  return [
    {
      name: 'large dictionary',
      raw: [members.map((i) => `a${i}=1`).join(', ')],
      header_type: 'dictionary',
      expected: members.map((i) => [`a${i}`, [1, []]]),
    },
    {
      name: 'large dictionary key',
      raw: [`${key}=1`],
      header_type: 'dictionary',
      expected: [[key, [1, []]]],
    },
    {
      name: 'large list',
      raw: [members.map((i) => `a${i}`).join(', ')],
      header_type: 'list',
      expected: members.map((i) => [token(`a${i}`), []]),
    },
    {
      name: 'large parameterised list',
      raw: [members.map((i) => `foo;a${i}=1`).join(', ')],
      header_type: 'list',
      expected: members.map((i) => [token('foo'), [[`a${i}`, 1]]]),
    },
    {
      name: 'large params',
      raw: [`foo;${params.map((i) => `a${i}=1`).join(';')}`],
      header_type: 'list',
      expected: [[token('foo'), params.map((i) => [`a${i}`, 1])]],
    },
    {
      name: 'large param key',
      raw: [`foo;${key}=1`],
      header_type: 'list',
      expected: [[token('foo'), [[key, 1]]]],
    },
    {
      name: 'large string',
      raw: [`"${'='.repeat(1024)}"`],
      header_type: 'item',
      expected: ['='.repeat(1024), []],
    },
    {
      name: 'large escaped string',
      raw: [`"${'\\"'.repeat(1024)}"`],
      header_type: 'item',
      expected: ['"'.repeat(1024), []],
    },
    {
      name: 'large token',
      raw: ['a'.repeat(512)],
      header_type: 'item',
      expected: [token('a'.repeat(512)), []],
    },
    {
      // 16384 bytes of "a": base64 "YWFh" per 3 bytes, base32 "MFQWCYLB" per 5 bytes.
      name: 'large byte sequence',
      raw: [`:${'YWFh'.repeat(5461)}YQ==:`],
      header_type: 'item',
      expected: [{ __type: 'binary', value: `${'MFQWCYLB'.repeat(3276)}MFQWCYI=` }, []],
    },
    {
      name: 'large inner list',
      raw: [`(${params.join(' ')})`],
      header_type: 'list',
      expected: [[params.map((i) => [i, []]), []]],
    },
  ]
}

// A whole decimal, as structured-field-tests.ts writes it.
const decimal = (text: string): unknown => {
  const value = Number(text)
  return Number.isInteger(value) ? { __type: 'decimal', value } : value
}

/** `number-generated.json` */
function numbers(): Test[] {
  const tests: Test[] = []
  for (const i of range(1, 15)) {
    tests.push(
      {
        name: `${i} digits of zero`,
        raw: ['0'.repeat(i)],
        header_type: 'item',
        expected: [0, []],
        canonical: ['0'],
      },
      {
        name: `${i} digit small integer`,
        raw: ['1'.repeat(i)],
        header_type: 'item',
        expected: [Number('1'.repeat(i)), []],
      },
      {
        name: `${i} digit large integer`,
        raw: ['9'.repeat(i)],
        header_type: 'item',
        expected: [Number('9'.repeat(i)), []],
      },
    )
  }
  for (const i of range(1, 12)) {
    for (const j of range(1, 3)) {
      const k = i + j
      tests.push(
        {
          name: `${k} digit 0, ${j} fractional small decimal`,
          raw: [`${'0'.repeat(i)}.${'1'.repeat(j)}`],
          header_type: 'item',
          expected: [decimal(`${'0'.repeat(i)}.${'1'.repeat(j)}`), []],
          canonical: [`0.${'1'.repeat(j)}`],
        },
        {
          name: `${k} digit, ${j} fractional 0 decimal`,
          raw: [`${'1'.repeat(i)}.${'0'.repeat(j)}`],
          header_type: 'item',
          expected: [decimal(`${'1'.repeat(i)}.${'0'.repeat(j)}`), []],
          canonical: [`${'1'.repeat(i)}.0`],
        },
        {
          name: `${k} digit, ${j} fractional small decimal`,
          raw: [`${'1'.repeat(i)}.${'1'.repeat(j)}`],
          header_type: 'item',
          expected: [decimal(`${'1'.repeat(i)}.${'1'.repeat(j)}`), []],
        },
        {
          name: `${k} digit, ${j} fractional large decimal`,
          raw: [`${'9'.repeat(i)}.${'9'.repeat(j)}`],
          header_type: 'item',
          expected: [decimal(`${'9'.repeat(i)}.${'9'.repeat(j)}`), []],
        },
      )
    }
  }
  tests.push(
    {
      name: 'too many digit 0 decimal',
      raw: [`${'0'.repeat(15)}.0`],
      header_type: 'item',
      must_fail: true,
    },
    {
      name: 'too many fractional digits 0 decimal',
      raw: [`${'0'.repeat(12)}.${'0'.repeat(4)}`],
      header_type: 'item',
      must_fail: true,
    },
    {
      name: 'too many digit 9 decimal',
      raw: [`${'9'.repeat(15)}.9`],
      header_type: 'item',
      must_fail: true,
    },
    {
      name: 'too many fractional digits 9 decimal',
      raw: [`${'9'.repeat(12)}.${'9'.repeat(4)}`],
      header_type: 'item',
      must_fail: true,
    },
  )
  return tests
}

/** The generated parsing tests, by the file `generate.py` writes them to. */
export function generatedParsingTests(): Record<string, Test[]> {
  return {
    'string-generated.json': strings(),
    'token-generated.json': tokens(),
    'key-generated.json': keys(),
    'large-generated.json': large(),
    'number-generated.json': numbers(),
  }
}

/** The generated serialisation tests, by file. */
export function generatedSerialisationTests(): Record<string, Test[]> {
  return {
    'serialisation-tests/string-generated.json': stringSerialisation(),
    'serialisation-tests/token-generated.json': tokenSerialisation(),
    'serialisation-tests/key-generated.json': keySerialisation(),
  }
}
