/**
 * Schema and table names. They cannot be statement parameters, so they are checked against a
 * strict pattern (lowercase letters, digits, `_`) and then double-quoted: nothing a caller
 * passes can change a statement's meaning, and no case folding surprises anyone.
 *
 * @module
 */

/** Where the tables live: a schema and a prefix for every table and index name. */
export interface TableNames {
  /** The schema, unquoted (validated). */
  readonly schema: string
  /** The prefix of every table and index name (validated). */
  readonly prefix: string
}

/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1); longer ones are refused. */
const MAX_IDENTIFIER = 63
const SCHEMA = /^[a-z_][a-z0-9_]*$/
const PREFIX = /^(?:[a-z_][a-z0-9_]*)?$/
/** The longest name a prefix is put before: `idempotency_records_ends_at`. */
const LONGEST_SUFFIX = 'idempotency_records_ends_at'.length

/** Validates the options shared by `migrate` and the stores. */
export function tableNames(options: { schema?: string; tablePrefix?: string }): TableNames {
  const { schema = 'public', tablePrefix: prefix = 'api_blocks_' } = options
  if (typeof schema !== 'string' || !SCHEMA.test(schema) || schema.length > MAX_IDENTIFIER) {
    throw new TypeError(
      `PostgreSQL schema ${JSON.stringify(schema)} must be 1 to 63 of a-z, 0-9 and _, not starting with a digit`,
    )
  }
  if (
    typeof prefix !== 'string' ||
    !PREFIX.test(prefix) ||
    prefix.length + LONGEST_SUFFIX > MAX_IDENTIFIER
  ) {
    throw new TypeError(
      `PostgreSQL tablePrefix ${JSON.stringify(prefix)} must be up to ${MAX_IDENTIFIER - LONGEST_SUFFIX} of a-z, 0-9 and _, not starting with a digit`,
    )
  }
  return { schema, prefix }
}

/** `"schema"."<prefix><name>"`: a table's qualified, quoted name. */
export function qualified(names: TableNames, name: string): string {
  return `"${names.schema}"."${names.prefix}${name}"`
}

/** Fills `{{schema}}` (quoted) and `{{prefix}}` (bare, used inside quoted names) in `sql`. */
export function render(sql: string, names: TableNames): string {
  return sql.replaceAll('{{schema}}', `"${names.schema}"`).replaceAll('{{prefix}}', names.prefix)
}
