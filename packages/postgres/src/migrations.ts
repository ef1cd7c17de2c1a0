/**
 * The schema of the PostgreSQL stores as data: an ordered list of migrations, and `migrate`,
 * which applies the missing ones in one statement (a PL/pgSQL `DO` block), so that it is
 * atomic, safe to run from several instances at once, and the same on `pg` and PGlite.
 *
 * @module
 */
import { PostgresStoreError } from './error.ts'
import type { TableNames } from './internal/names.ts'
import { qualified, render, tableNames } from './internal/names.ts'
import type { Queryable } from './queryable.ts'

/**
 * One migration: a stable id (applied once, in list order) and its SQL. In {@link migrations}
 * the SQL holds `{{schema}}` and `{{prefix}}` placeholders; {@link postgresMigrations} fills
 * them.
 *
 * @example
 * ```ts
 * const migration: Migration = { id: '0001_idempotency_records', sql: 'CREATE TABLE …' }
 * ```
 */
export interface Migration {
  /** Applied in list order; recorded in the `<prefix>migrations` table once applied. */
  readonly id: string
  /** One or more statements, run in one transaction with the others (so no `CONCURRENTLY`). */
  readonly sql: string
}

/**
 * Every migration of this package, oldest first, with `{{schema}}` and `{{prefix}}`
 * placeholders. Released migrations never change; a new version appends.
 *
 * Times are `double precision` milliseconds since the epoch: exact for every integer up to
 * 2^53 (like a JavaScript number), and a clock with fractions of a millisecond is compared
 * exactly as the memory store compares it. `ends_at` is when the record becomes logically
 * absent (see `IdempotencyStore`), kept by PostgreSQL itself (a stored generated column), so a
 * claim tests one column and the sweep walks one index.
 *
 * `0002_oauth` holds the tables of `PostgresOAuthStore` (`oauth_interactions`, `oauth_codes`,
 * `oauth_families`, `oauth_tokens`, `oauth_replay_cache`), keyed by the ids and keyed hashes
 * the authorisation server passes (never a code or token in the clear), each with an index on
 * the time after which `purgeExpired` deletes its rows. `0003_oauth_binding_and_token_scopes`
 * adds what an interaction carries for the browser binding and OpenID Connect (`binding_hash`,
 * `prompt`, `max_age`, `login_hint`; interactions saved before it have an empty binding, so
 * they can no longer be completed) and a token's own narrower `scopes`. `0004_webhooks` holds the
 * tables of `PostgresEndpointStore`, `PostgresDeliveryQueue` and `PostgresDedupStore`
 * (`webhook_endpoints`, `webhook_deliveries` with its lease columns and an attempt log of at
 * most 50 lines, `webhook_dedup`), with partial indexes for the claim (pending deliveries by
 * due time, and by endpoint for the per-endpoint limit), the listing by endpoint, range
 * replays, and the purge of final deliveries. `0005_webhook_claim_per_endpoint` adds the function
 * of `PostgresDeliveryQueue.claim` with `perEndpoint`: under a transaction-level advisory lock
 * per schema and prefix, so concurrent claims run one after another and each counts the leases
 * of those before it (the cap is exact). `0006_graphql_persisted_documents` holds the table of
 * `PostgresPersistedDocumentStore` (`graphql_documents`: the documents as UTF-8 `bytea`, and
 * when each was last used, indexed for the prune by last use).
 *
 * @example
 * ```ts
 * for (const { id } of migrations) console.log(id) // 0001_idempotency_records, 0002_oauth, 0003_oauth_binding_and_token_scopes, 0004_webhooks, 0005_webhook_claim_per_endpoint, 0006_graphql_persisted_documents
 * ```
 */
export const migrations: readonly Migration[] = Object.freeze([
  {
    id: '0001_idempotency_records',
    sql: `
CREATE TABLE {{schema}}."{{prefix}}idempotency_records" (
  key              text PRIMARY KEY,
  state            text NOT NULL CHECK (state IN ('claimed', 'completed')),
  fingerprint      text NOT NULL,
  owner            text NOT NULL,
  lease_expires_at double precision NOT NULL,
  expires_at       double precision,
  recovery_point   text,
  status           smallint,
  headers          jsonb,
  body             bytea,
  ends_at          double precision NOT NULL GENERATED ALWAYS AS (
    CASE
      WHEN state = 'completed' THEN expires_at
      WHEN recovery_point IS NULL THEN lease_expires_at
      ELSE GREATEST(lease_expires_at, expires_at)
    END
  ) STORED,
  CHECK (state = 'claimed' OR (expires_at IS NOT NULL AND status IS NOT NULL
                               AND headers IS NOT NULL AND body IS NOT NULL)),
  CHECK (recovery_point IS NULL OR expires_at IS NOT NULL)
);
CREATE INDEX "{{prefix}}idempotency_records_ends_at"
  ON {{schema}}."{{prefix}}idempotency_records" (ends_at);
`,
  },
  {
    id: '0002_oauth',
    sql: `
CREATE TABLE {{schema}}."{{prefix}}oauth_interactions" (
  id             text PRIMARY KEY,
  client_id      text NOT NULL,
  redirect_uri   text NOT NULL,
  scopes         text[] NOT NULL,
  state          text NOT NULL,
  nonce          text,
  code_challenge text NOT NULL,
  resource       text NOT NULL,
  created_at     double precision NOT NULL,
  expires_at     double precision NOT NULL
);
CREATE INDEX "{{prefix}}oauth_interactions_expiry"
  ON {{schema}}."{{prefix}}oauth_interactions" (expires_at);

CREATE TABLE {{schema}}."{{prefix}}oauth_codes" (
  code_hash      text PRIMARY KEY,
  client_id      text NOT NULL,
  redirect_uri   text NOT NULL,
  subject        text NOT NULL,
  scopes         text[] NOT NULL,
  code_challenge text NOT NULL,
  nonce          text,
  auth_time      double precision NOT NULL,
  resource       text NOT NULL,
  family_id      text NOT NULL,
  expires_at     double precision NOT NULL,
  consumed_at    double precision
);
CREATE INDEX "{{prefix}}oauth_codes_expires_at"
  ON {{schema}}."{{prefix}}oauth_codes" (expires_at);

-- A family (grant), or only the revocation mark of one: revokeFamily may come before the
-- family exists (a replayed code), and then writes a row with client_id NULL that issue()
-- finds. One row per family id, so issue() and revokeFamily() meet on one row lock.
CREATE TABLE {{schema}}."{{prefix}}oauth_families" (
  id           text PRIMARY KEY,
  client_id    text,
  subject      text,
  scopes       text[],
  resource     text,
  auth_time    double precision,
  created_at   double precision,
  expires_at   double precision,
  revoked_at   double precision,
  retain_until double precision,
  ends_at      double precision NOT NULL GENERATED ALWAYS AS (GREATEST(expires_at, retain_until)) STORED,
  CHECK ((client_id IS NOT NULL AND scopes IS NOT NULL AND resource IS NOT NULL
          AND created_at IS NOT NULL AND expires_at IS NOT NULL)
         OR (client_id IS NULL AND revoked_at IS NOT NULL AND retain_until IS NOT NULL))
);
CREATE INDEX "{{prefix}}oauth_families_ends_at"
  ON {{schema}}."{{prefix}}oauth_families" (ends_at);

CREATE TABLE {{schema}}."{{prefix}}oauth_tokens" (
  token_hash   text PRIMARY KEY,
  family_id    text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('access_token', 'refresh_token')),
  jti          text NOT NULL,
  issued_at    double precision NOT NULL,
  expires_at   double precision NOT NULL,
  confirmation jsonb,
  revoked_at   double precision,
  rotated_at   double precision
);
CREATE INDEX "{{prefix}}oauth_tokens_expires_at"
  ON {{schema}}."{{prefix}}oauth_tokens" (expires_at);

CREATE TABLE {{schema}}."{{prefix}}oauth_replay_cache" (
  key        text PRIMARY KEY,
  expires_at double precision NOT NULL
);
CREATE INDEX "{{prefix}}oauth_replay_cache_expiry"
  ON {{schema}}."{{prefix}}oauth_replay_cache" (expires_at);
`,
  },
  {
    id: '0003_oauth_binding_and_token_scopes',
    sql: `
ALTER TABLE {{schema}}."{{prefix}}oauth_interactions"
  ADD COLUMN binding_hash text NOT NULL DEFAULT '',
  ADD COLUMN prompt       text[],
  ADD COLUMN max_age      double precision,
  ADD COLUMN login_hint   text;
ALTER TABLE {{schema}}."{{prefix}}oauth_interactions" ALTER COLUMN binding_hash DROP DEFAULT;
ALTER TABLE {{schema}}."{{prefix}}oauth_tokens" ADD COLUMN scopes text[];
`,
  },
  {
    id: '0004_webhooks',
    sql: `
CREATE TABLE {{schema}}."{{prefix}}webhook_endpoints" (
  id              text COLLATE "C" PRIMARY KEY,
  url             text NOT NULL,
  events          text[],
  status          text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  disabled_reason text,
  secrets         jsonb NOT NULL,
  owner           text COLLATE "C",
  created_at      double precision NOT NULL,
  updated_at      double precision NOT NULL,
  version         integer NOT NULL
);
CREATE INDEX "{{prefix}}webhook_endpoints_owner"
  ON {{schema}}."{{prefix}}webhook_endpoints" (owner, id);

-- Ids are ordered by their bytes (COLLATE "C"), as the memory stores order them, whatever the
-- database's collation. One row per (event, endpoint). A lease is (lease, lease_expires_at), both NULL when none;
-- settle and release clear it, so only in-flight (or crashed) deliveries carry one.
CREATE TABLE {{schema}}."{{prefix}}webhook_deliveries" (
  event_id         text COLLATE "C" NOT NULL,
  endpoint_id      text COLLATE "C" NOT NULL,
  event_type       text NOT NULL,
  payload          text NOT NULL,
  created_at       double precision NOT NULL,
  next_attempt_at  double precision NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'dead')),
  attempts         integer NOT NULL,
  log              jsonb NOT NULL CHECK (jsonb_typeof(log) = 'array' AND jsonb_array_length(log) <= 50),
  updated_at       double precision NOT NULL,
  lease            text,
  lease_expires_at double precision,
  PRIMARY KEY (event_id, endpoint_id),
  CHECK ((lease IS NULL) = (lease_expires_at IS NULL))
);
-- claim: the due deliveries, earliest first.
CREATE INDEX "{{prefix}}webhook_deliveries_due"
  ON {{schema}}."{{prefix}}webhook_deliveries" (next_attempt_at) WHERE status = 'pending';
-- claim with perEndpoint: the endpoints that have pending deliveries, and each one's earliest.
CREATE INDEX "{{prefix}}webhook_deliveries_queues"
  ON {{schema}}."{{prefix}}webhook_deliveries" (endpoint_id, next_attempt_at) WHERE status = 'pending';
-- claim with perEndpoint: the leases held.
CREATE INDEX "{{prefix}}webhook_deliveries_leases"
  ON {{schema}}."{{prefix}}webhook_deliveries" (endpoint_id, lease_expires_at) WHERE lease IS NOT NULL;
-- list and the backlog replay: one endpoint's deliveries, newest event first.
CREATE INDEX "{{prefix}}webhook_deliveries_endpoint"
  ON {{schema}}."{{prefix}}webhook_deliveries" (endpoint_id, created_at DESC, event_id DESC);
-- replay of a time range across endpoints.
CREATE INDEX "{{prefix}}webhook_deliveries_replay"
  ON {{schema}}."{{prefix}}webhook_deliveries" (created_at) WHERE status IN ('failed', 'dead');
-- purge: final deliveries by age.
CREATE INDEX "{{prefix}}webhook_deliveries_final"
  ON {{schema}}."{{prefix}}webhook_deliveries" (updated_at) WHERE status <> 'pending';

CREATE TABLE {{schema}}."{{prefix}}webhook_dedup" (
  id         text PRIMARY KEY,
  expires_at double precision NOT NULL
);
CREATE INDEX "{{prefix}}webhook_dedup_expires_at"
  ON {{schema}}."{{prefix}}webhook_dedup" (expires_at);
`,
  },
  {
    id: '0005_webhook_claim_per_endpoint',
    sql: `
-- claim with perEndpoint, exact under concurrency. $1 now, $2 limit, $3 lease token, $4 lease
-- expiry, $5 perEndpoint. A transaction-level advisory lock (one key per schema and prefix)
-- makes these claims run one after another; in READ COMMITTED a VOLATILE function takes a
-- fresh snapshot for each query it runs, so the claim query, run once the lock is held, sees
-- the leases of every claim before it (the lock is released after the holder's commit).
-- The endpoints with pending deliveries come from a loose index scan: one index probe per
-- endpoint, however long its queue, which lands on the endpoint's earliest pending delivery.
-- Endpoints with nothing due (only retries scheduled later) stop there. Then the leases each
-- holds, and from each endpoint with a due delivery its earliest due deliveries up to the room it has left (SKIP LOCKED: rows a claim without
-- perEndpoint holds are left to it); then the earliest of those, up to the limit. Each row's
-- lease is the token, '.' and the row's number: its own, new on every claim.
CREATE FUNCTION {{schema}}."{{prefix}}webhook_claim_per_endpoint"(
  double precision, integer, text, double precision, integer
) RETURNS SETOF {{schema}}."{{prefix}}webhook_deliveries"
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $claim$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('api-blocks.webhook-claim.{{schema}}.{{prefix}}', 0));
  RETURN QUERY WITH RECURSIVE queues(endpoint_id, earliest) AS (
    (SELECT f.endpoint_id, f.next_attempt_at FROM {{schema}}."{{prefix}}webhook_deliveries" f
     WHERE f.status = 'pending' ORDER BY f.endpoint_id, f.next_attempt_at LIMIT 1)
    UNION ALL
    SELECT n.endpoint_id, n.next_attempt_at FROM queues q CROSS JOIN LATERAL (
      SELECT d.endpoint_id, d.next_attempt_at FROM {{schema}}."{{prefix}}webhook_deliveries" d
      WHERE d.status = 'pending' AND d.endpoint_id > q.endpoint_id
      ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1
    ) n
  ), held AS (
    SELECT l.endpoint_id, count(*)::integer AS n FROM {{schema}}."{{prefix}}webhook_deliveries" l
    WHERE l.lease IS NOT NULL AND l.lease_expires_at > $1
    GROUP BY l.endpoint_id
  ), picked AS (
    SELECT c.event_id, c.endpoint_id
    FROM queues q
    LEFT JOIN held h ON h.endpoint_id = q.endpoint_id
    CROSS JOIN LATERAL (
      SELECT d.event_id, d.endpoint_id, d.next_attempt_at FROM {{schema}}."{{prefix}}webhook_deliveries" d
      WHERE d.endpoint_id = q.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= $1
        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1)
      ORDER BY d.next_attempt_at
      LIMIT greatest($5 - coalesce(h.n, 0), 0)
      FOR UPDATE SKIP LOCKED
    ) c
    WHERE q.earliest <= $1
    ORDER BY c.next_attempt_at
    LIMIT $2
  ), numbered AS (
    SELECT p.event_id, p.endpoint_id, row_number() OVER () AS n FROM picked p
  )
  UPDATE {{schema}}."{{prefix}}webhook_deliveries" AS d SET lease = $3 || '.' || p.n, lease_expires_at = $4
  FROM numbered p
  WHERE d.event_id = p.event_id AND d.endpoint_id = p.endpoint_id
  RETURNING d.*;
END
$claim$;
`,
  },
  {
    id: '0006_graphql_persisted_documents',
    sql: `
-- The documents of PostgresPersistedDocumentStore (APQ registrations, manifests), by id
-- ('sha256:<hex>' or a manifest's own), compared byte for byte (COLLATE "C"). The text is
-- UTF-8 in bytea: a GraphQL document may hold U+0000 (in a comment or a string), which a text
-- column refuses. last_used_at is when it was stored or last read (to the minute); the prune
-- that keeps the row cap walks its index from the least recently used end.
CREATE TABLE {{schema}}."{{prefix}}graphql_documents" (
  id           text COLLATE "C" PRIMARY KEY,
  document     bytea NOT NULL,
  created_at   double precision NOT NULL,
  last_used_at double precision NOT NULL
);
CREATE INDEX "{{prefix}}graphql_documents_used"
  ON {{schema}}."{{prefix}}graphql_documents" (last_used_at, id);
`,
  },
])

/**
 * Options of {@link migrate} and of the stores: where the tables live.
 *
 * @example
 * ```ts
 * const options: PostgresTableOptions = { schema: 'api', tablePrefix: 'orders_' }
 * await migrate(db, options)
 * const store = new PostgresIdempotencyStore({ db, ...options })
 * ```
 */
export interface PostgresTableOptions {
  /**
   * The schema (default `public`), created by `migrate` if missing. Lowercase letters, digits
   * and `_`.
   */
  schema?: string
  /** Put before every table and index name (default `api_blocks_`). Lowercase letters, digits, `_`. */
  tablePrefix?: string
}

/**
 * The migrations with their names filled in, for a migration tool of your own (Flyway, Atlas,
 * node-pg-migrate…) instead of {@link migrate}. Apply them in order, each once.
 *
 * @example
 * ```ts
 * for (const { id, sql } of postgresMigrations({ schema: 'api' })) writeFileSync(`migrations/${id}.sql`, sql)
 * ```
 */
export function postgresMigrations(options: PostgresTableOptions = {}): readonly Migration[] {
  const names = tableNames(options)
  return migrations.map(({ id, sql }) => ({ id, sql: render(sql, names) }))
}

/**
 * What {@link migrate} did.
 *
 * @example
 * ```ts
 * const { applied } = await migrate(db)
 * if (applied.length > 0) console.log(`applied ${applied.join(', ')}`)
 * ```
 */
export interface MigrationResult {
  /** The ids this call applied, in order; empty when the schema was up to date. */
  readonly applied: readonly string[]
}

/** Dollar-quote tags: no migration may contain them (checked), so quoting cannot break. */
const BLOCK_TAG = '$api_blocks_migrate$'
const SQL_TAG = '$api_blocks_sql$'
const SAFE_LITERAL = /^[a-z0-9_.-]+$/

function literal(value: string): string {
  // Only ever called with validated names, ids and a UUID: the check makes that a guarantee.
  if (!SAFE_LITERAL.test(value)) throw new TypeError(`Unsafe SQL literal ${JSON.stringify(value)}`)
  return `'${value}'`
}

/** The one `DO` block that applies the missing migrations, marking them with `run`. */
function migrationBlock(names: TableNames, list: readonly Migration[], run: string): string {
  const ledger = qualified(names, 'migrations')
  const steps = list.map(({ id, sql }) => {
    const text = render(sql, names)
    if (text.includes(BLOCK_TAG) || text.includes(SQL_TAG)) {
      throw new TypeError(`Migration ${id} contains a reserved dollar-quote tag`)
    }
    return `
  IF NOT EXISTS (SELECT 1 FROM ${ledger} WHERE id = ${literal(id)}) THEN
    EXECUTE ${SQL_TAG}${text}${SQL_TAG};
    INSERT INTO ${ledger} (id, applied_by) VALUES (${literal(id)}, ${literal(run)});
  END IF;`
  })
  return `DO ${BLOCK_TAG}
BEGIN
  -- One migrator at a time per schema. A transaction-level lock: released when this statement
  -- commits or fails, so it can never outlive the call on a pooled connection.
  PERFORM pg_advisory_xact_lock(hashtextextended(${literal(`api-blocks.migrate.${names.schema}`)}, 0));
  -- Under the lock, so two first runs cannot race to create the schema. The existence check
  -- comes first because CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege.
  IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${literal(names.schema)}) THEN
    EXECUTE 'CREATE SCHEMA "${names.schema}"';
  END IF;
  CREATE TABLE IF NOT EXISTS ${ledger} (
    id         text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    applied_by text NOT NULL
  );${steps.join('')}
END
${BLOCK_TAG}`
}

/**
 * Creates the schema and the tables of the PostgreSQL stores, applying the migrations that are
 * missing, in order. Idempotent: a second call applies nothing. Run it at startup, or from a
 * deploy step.
 *
 * **One statement.** Everything runs in one PL/pgSQL `DO` block, so one transaction: either
 * every missing migration is applied and recorded in `<prefix>migrations`, or none is. A second
 * query reads back which ids this call applied.
 *
 * **Several instances at once.** The block first takes `pg_advisory_xact_lock` on a key derived
 * from the schema name, so concurrent calls (two instances starting together, two pools) run
 * one after the other; the second finds everything recorded and applies nothing. The lock is
 * transaction-level: it cannot leak on a pooled connection, and no `BEGIN`/`COMMIT` has to share
 * a connection, so a `pg.Pool` is fine.
 *
 * **PGlite** is one connection, serving one statement at a time: concurrent calls on one
 * instance simply queue, each block runs whole, and the advisory lock is uncontended (PGlite
 * runs the same PostgreSQL code, so the block is the same).
 *
 * Needs PostgreSQL 12 or later (stored generated columns) and, when the schema does not exist
 * yet, the CREATE privilege on the database.
 *
 * @throws {PostgresStoreError} `QUERY_FAILED` when a statement fails. A failed block applied
 *   nothing: run `migrate` again once the cause is fixed.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite'
 * import { migrate, PostgresIdempotencyStore } from '@api-blocks/postgres'
 *
 * const db = new PGlite()
 * await migrate(db) // { applied: ['0001_idempotency_records', '0002_oauth', '0003_oauth_binding_and_token_scopes', '0004_webhooks', '0005_webhook_claim_per_endpoint', '0006_graphql_persisted_documents'] }
 * await migrate(db) // { applied: [] }
 * const store = new PostgresIdempotencyStore({ db })
 * ```
 */
export async function migrate(
  db: Queryable,
  options: PostgresTableOptions = {},
): Promise<MigrationResult> {
  const names = tableNames(options)
  const run = crypto.randomUUID()
  const block = migrationBlock(names, migrations, run)
  try {
    await db.query(block)
    const { rows } = await db.query(
      `SELECT id FROM ${qualified(names, 'migrations')} WHERE applied_by = $1`,
      [run],
    )
    const applied = new Set(rows.map((row) => (row as { id: unknown }).id))
    return { applied: migrations.map(({ id }) => id).filter((id) => applied.has(id)) }
  } catch (cause) {
    throw new PostgresStoreError(
      'QUERY_FAILED',
      'migrate',
      `Migrating the PostgreSQL schema "${names.schema}" failed.`,
      { cause },
    )
  }
}
