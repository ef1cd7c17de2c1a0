/**
 * A canonical JSON text for a filter object, so that two equal queries hash the same whatever
 * the order their members were built in.
 *
 * @module
 */

/** A value a filter may hold: JSON, plus `undefined` for "not given". */
export type FilterValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly FilterValue[]
  | { readonly [name: string]: FilterValue }

/**
 * JSON with object members sorted by name (UTF-16 code units) and `undefined` members dropped,
 * as JSON.stringify drops them. Non-finite numbers become `null`, as in JSON.stringify.
 * Array order is kept: `?status=a&status=b` and `?status=b&status=a` are different queries.
 */
export function canonicalJson(value: FilterValue): string {
  if (value === undefined || value === null) return 'null'
  if (typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) {
    return `[${(value as readonly FilterValue[]).map(canonicalJson).join(',')}]`
  }
  const record = value as { readonly [name: string]: FilterValue }
  const members: string[] = []
  for (const name of Object.keys(record).sort()) {
    const member = record[name]
    if (member === undefined) continue
    members.push(`${JSON.stringify(name)}:${canonicalJson(member)}`)
  }
  return `{${members.join(',')}}`
}
