/**
 * HTTP-date (RFC 9110 §5.6.7): parse the preferred IMF-fixdate and the two obsolete formats,
 * and format IMF-fixdate. Timestamps are milliseconds since the epoch, always whole seconds:
 * HTTP dates have one-second resolution, so validators are compared at that granularity.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
 * @module
 */

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const
const LONG_DAY_NAMES = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
] as const
const MONTHS = [
  'Jan',
  'Feb',
  'Mar',
  'Apr',
  'May',
  'Jun',
  'Jul',
  'Aug',
  'Sep',
  'Oct',
  'Nov',
  'Dec',
] as const

const key3 = (s: string, i: number): number =>
  (s.charCodeAt(i) << 16) | (s.charCodeAt(i + 1) << 8) | s.charCodeAt(i + 2)
const DAY_INDEX = new Map(DAY_NAMES.map((name, index) => [key3(name, 0), index]))
const MONTH_INDEX = new Map(MONTHS.map((name, index) => [key3(name, 0), index + 1]))

const SP = 0x20
const HTAB = 0x09
const MS_PER_DAY = 86_400_000

function digit(s: string, i: number): number {
  const d = s.charCodeAt(i) - 0x30
  return d >= 0 && d <= 9 ? d : -1
}

function twoDigits(s: string, i: number): number {
  const a = digit(s, i)
  const b = digit(s, i + 1)
  return a < 0 || b < 0 ? -1 : a * 10 + b
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms"); exact for every year, unlike Date.UTC for years 0-99.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

// time-of-day = hour ":" minute ":" second, 00:00:00 - 23:59:60 (leap second). Returns
// seconds of the day or -1.
function timeOfDay(s: string, i: number): number {
  if (s.charCodeAt(i + 2) !== 0x3a || s.charCodeAt(i + 5) !== 0x3a) return -1
  const hour = twoDigits(s, i)
  const minute = twoDigits(s, i + 3)
  const second = twoDigits(s, i + 6)
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return -1
  // A leap second (":60") is read as ":59": both comparisons that use dates
  // (If-Modified-Since, If-Unmodified-Since) then lean to their safe outcome.
  return hour * 3600 + minute * 60 + Math.min(second, 59)
}

function toTimestamp(
  year: number,
  month: number,
  day: number,
  seconds: number,
  weekday: number,
): number | undefined {
  if (month < 1 || day < 1 || day > daysInMonth(year, month) || seconds < 0) return undefined
  const days = daysFromCivil(year, month, day)
  // RFC 5322 §3.3 (IMF-fixdate is a subset of it): the day-of-week MUST be the one the date
  // implies. A date that contradicts itself is not a valid HTTP-date.
  if ((((days + 4) % 7) + 7) % 7 !== weekday) return undefined
  return days * MS_PER_DAY + seconds * 1000
}

// IMF-fixdate = day-name "," SP date1 SP time-of-day SP GMT  (Sun, 06 Nov 1994 08:49:37 GMT)
function imfFixdate(s: string): number | undefined {
  if (s.charCodeAt(4) !== SP || s.charCodeAt(7) !== SP || s.charCodeAt(11) !== SP) return undefined
  if (s.charCodeAt(16) !== SP || s.charCodeAt(25) !== SP || !s.endsWith('GMT')) return undefined
  const weekday = DAY_INDEX.get(key3(s, 0)) ?? -1
  const month = MONTH_INDEX.get(key3(s, 8)) ?? 0
  const day = twoDigits(s, 5)
  const high = twoDigits(s, 12)
  const low = twoDigits(s, 14)
  if (weekday < 0 || high < 0 || low < 0) return undefined
  return toTimestamp(high * 100 + low, month, day, timeOfDay(s, 17), weekday)
}

// asctime-date = day-name SP date3 SP time-of-day SP year  (Sun Nov  6 08:49:37 1994)
// date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
function asctime(s: string): number | undefined {
  if (s.charCodeAt(7) !== SP || s.charCodeAt(10) !== SP || s.charCodeAt(19) !== SP) return undefined
  const weekday = DAY_INDEX.get(key3(s, 0)) ?? -1
  const month = MONTH_INDEX.get(key3(s, 4)) ?? 0
  const day = s.charCodeAt(8) === SP ? digit(s, 9) : twoDigits(s, 8)
  const high = twoDigits(s, 20)
  const low = twoDigits(s, 22)
  if (weekday < 0 || day < 0 || high < 0 || low < 0) return undefined
  return toTimestamp(high * 100 + low, month, day, timeOfDay(s, 11), weekday)
}

// rfc850-date = day-name-l "," SP date2 SP time-of-day SP GMT  (Sunday, 06-Nov-94 08:49:37 GMT)
// date2 = day "-" month "-" 2DIGIT
function rfc850(s: string, now: number): number | undefined {
  const comma = s.length - 24
  if (s.charCodeAt(comma) !== 0x2c || s.charCodeAt(comma + 1) !== SP) return undefined
  const weekday = LONG_DAY_NAMES.indexOf(s.slice(0, comma) as (typeof LONG_DAY_NAMES)[number])
  const at = comma + 2
  if (s.charCodeAt(at + 2) !== 0x2d || s.charCodeAt(at + 6) !== 0x2d) return undefined
  if (s.charCodeAt(at + 9) !== SP || s.charCodeAt(at + 18) !== SP || !s.endsWith('GMT')) {
    return undefined
  }
  const day = twoDigits(s, at)
  const month = MONTH_INDEX.get(key3(s, at + 3)) ?? 0
  const yy = twoDigits(s, at + 7)
  if (weekday < 0 || day < 0 || yy < 0) return undefined
  // RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years in the future"
  // MUST be read as "the most recent year in the past that had the same last two digits".
  const thisYear = new Date(now).getUTCFullYear()
  let year = thisYear - (thisYear % 100) + yy
  if (year > thisYear + 50) year -= 100
  else if (year <= thisYear - 50) year += 100
  return toTimestamp(year, month, day, timeOfDay(s, at + 10), weekday)
}

/**
 * Options of {@link parseHttpDate}.
 *
 * @example
 * ```ts
 * const options: ParseHttpDateOptions = { now: Date.UTC(2026, 0, 1) }
 * parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', options) // 784111777000
 * ```
 */
export interface ParseHttpDateOptions {
  /**
   * The current time (ms since the epoch). Only RFC 850 dates use it, to place their
   * two-digit year (RFC 9110 §5.6.7). Defaults to `Date.now()`.
   */
  now?: number
}

/**
 * Parses an HTTP-date in any of the three formats of RFC 9110 §5.6.7 and returns milliseconds
 * since the epoch (whole seconds), or `undefined` when the value is not a valid HTTP-date.
 * Never throws.
 *
 * The grammar is followed exactly, as the RFC defines it: names are case-sensitive, the zone
 * is `GMT`, the fields are at fixed positions, the day exists in its month and the day name
 * agrees with the date. Surrounding whitespace is ignored. A leap second (`:60`) counts as
 * `:59`. Anything else (a list of dates, ISO 8601, a numeric zone) is invalid, and the
 * conditional fields that carry it are then ignored, as RFC 9110 §13.1.3 and §13.1.4 require.
 *
 * @example
 * ```ts
 * parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')  // 784111777000
 * parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT') // 784111777000
 * parseHttpDate('Sun Nov  6 08:49:37 1994')       // 784111777000
 * parseHttpDate('1994-11-06T08:49:37Z')           // undefined
 * ```
 */
export function parseHttpDate(value: string, options?: ParseHttpDateOptions): number | undefined {
  if (typeof value !== 'string') return undefined
  let start = 0
  let end = value.length
  if (end > 64) return undefined
  while (start < end && (value.charCodeAt(start) === SP || value.charCodeAt(start) === HTAB)) {
    start++
  }
  while (end > start && (value.charCodeAt(end - 1) === SP || value.charCodeAt(end - 1) === HTAB)) {
    end--
  }
  const s = start === 0 && end === value.length ? value : value.slice(start, end)
  const length = s.length
  // RFC 9110 §5.6.7: HTTP-date = IMF-fixdate / obs-date; obs-date = rfc850-date / asctime-date
  if (length === 29 && s.charCodeAt(3) === 0x2c) return imfFixdate(s)
  if (length === 24 && s.charCodeAt(3) === SP) return asctime(s)
  if (length >= 30 && length <= 33) return rfc850(s, options?.now ?? Date.now())
  return undefined
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`)

/**
 * Formats a time as an IMF-fixdate (RFC 9110 §5.6.7), the only format a sender may generate,
 * for Last-Modified, Date, Expires or Sunset. Milliseconds are dropped (truncated), since an
 * HTTP-date has one-second resolution. Throws a `RangeError` for an invalid date or a year
 * outside 0000-9999.
 *
 * @example
 * ```ts
 * formatHttpDate(784111777000)                          // 'Sun, 06 Nov 1994 08:49:37 GMT'
 * formatHttpDate(new Date('1994-11-06T08:49:37.999Z')) // 'Sun, 06 Nov 1994 08:49:37 GMT'
 * ```
 */
export function formatHttpDate(date: Date | number): string {
  const ms = typeof date === 'number' ? date : date.getTime()
  const when = new Date(Math.floor(ms / 1000) * 1000)
  const year = when.getUTCFullYear()
  if (!Number.isFinite(ms) || Number.isNaN(year) || year < 0 || year > 9999) {
    throw new RangeError(`Cannot format ${String(date)} as an HTTP-date`)
  }
  return `${DAY_NAMES[when.getUTCDay()]}, ${pad2(when.getUTCDate())} ${MONTHS[when.getUTCMonth()]} ${String(year).padStart(4, '0')} ${pad2(when.getUTCHours())}:${pad2(when.getUTCMinutes())}:${pad2(when.getUTCSeconds())} GMT`
}
