/**
 * The statements of `PostgresOAuthStore`, one per operation, built once per store with the
 * tables' qualified names. Every one is a single statement, so it runs on any connection of a
 * pool and is atomic on its own; the ones that decide a race lock the row they decide on
 * (`SELECT … FOR UPDATE` in a CTE, `INSERT … ON CONFLICT … DO UPDATE`, `DELETE`), and under READ
 * COMMITTED a locked row is re-read at its latest committed version, so the answer is computed
 * from the state the statement's own write replaces, never from a stale snapshot.
 *
 * Times are `double precision` ms since the epoch, and a record is live while
 * `expires_at > now` (at `now = expiresAt` it is gone), as in the memory store.
 *
 * @module
 */
import type { TableNames } from './names.ts'
import { qualified } from './names.ts'

/** The columns of an interaction, in the order of its INSERT parameters $1..$14. */
const INTERACTION =
  'id, client_id, redirect_uri, scopes, state, nonce, code_challenge, resource, created_at, expires_at, binding_hash, prompt, max_age, login_hint'
/** The columns of a code, in the order of its INSERT parameters $1..$11. */
const CODE =
  'code_hash, client_id, redirect_uri, subject, scopes, code_challenge, nonce, auth_time, resource, family_id, expires_at'
/** The family's columns, as `family_…` in the rows of findToken and rotateRefresh. */
const FAMILY_AS = `f.id AS family_id, f.client_id AS family_client_id, f.subject AS family_subject,
  f.scopes AS family_scopes, f.resource AS family_resource, f.auth_time AS family_auth_time,
  f.created_at AS family_created_at, f.expires_at AS family_expires_at`
/** The new tokens, a JSON array parameter, as rows. */
const NEW_TOKENS = (param: string) =>
  `jsonb_to_recordset(${param}::jsonb) AS n(token_hash text, kind text, jti text,
    issued_at double precision, expires_at double precision, confirmation jsonb, scopes text[])`
/** Deletes one batch of `table` rows whose `column` is at or before $1, at most $2 of them. */
const purge = (table: string, key: string, column: string) => `DELETE FROM ${table}
  WHERE ${key} IN (
    SELECT ${key} FROM ${table} WHERE ${column} <= $1::double precision
    ORDER BY ${column} LIMIT $2 FOR UPDATE SKIP LOCKED
  ) AND ${column} <= $1::double precision
  RETURNING 1`

/** The operations that have a statement. */
export type OAuthStatementName =
  | 'saveInteraction'
  | 'findInteraction'
  | 'takeInteraction'
  | 'saveCode'
  | 'consumeCode'
  | 'issue'
  | 'findToken'
  | 'rotateRefresh'
  | 'revokeToken'
  | 'revokeFamily'
  | 'remember'
  | 'purge'

/** The statements of the OAuth store, for the tables of `names`. */
export function oauthStatements(names: TableNames): Readonly<Record<OAuthStatementName, string>> {
  const interactions = qualified(names, 'oauth_interactions')
  const codes = qualified(names, 'oauth_codes')
  const families = qualified(names, 'oauth_families')
  const tokens = qualified(names, 'oauth_tokens')
  const replay = qualified(names, 'oauth_replay_cache')
  // issue() replaces a family row only when it is logically absent (past its end): a family
  // that lives, or a revocation mark that is still kept, is left as it is.
  const gone = 'f.ends_at <= $10::double precision'
  const renew = (column: string) =>
    `${column} = CASE WHEN ${gone} THEN EXCLUDED.${column} ELSE f.${column} END`
  return {
    saveInteraction: `INSERT INTO ${interactions} (${INTERACTION})
VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $8, $9, $10, $11, $12::text[], $13::double precision, $14)`,
    /** $1 id, $2 now. */
    findInteraction: `SELECT ${INTERACTION} FROM ${interactions}
WHERE id = $1 AND expires_at > $2::double precision`,
    /**
     * $1 id, $2 now. A DELETE locks the row: of concurrent calls the first deletes it, the
     * others wait for it, then find it gone and return nothing.
     */
    takeInteraction: `DELETE FROM ${interactions}
WHERE id = $1 AND expires_at > $2::double precision
RETURNING ${INTERACTION}`,

    saveCode: `INSERT INTO ${codes} (${CODE})
VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9, $10, $11)`,
    /**
     * $1 codeHash, $2 now. `prev` locks the live code and returns it as it is once locked (the
     * latest committed version, a concurrent consumption included); the UPDATE consumes it only
     * when `prev` saw it unused, and the answer is `prev`'s. A plain `UPDATE … WHERE consumed_at
     * IS NULL` followed by a SELECT would call a code that another call consumed in between
     * absent, or replayed when this call consumed it.
     */
    consumeCode: `WITH prev AS MATERIALIZED (
  SELECT ${CODE}, consumed_at FROM ${codes}
  WHERE code_hash = $1 AND expires_at > $2::double precision
  FOR UPDATE
), consumed AS (
  UPDATE ${codes} AS c SET consumed_at = $2::double precision
  FROM prev WHERE c.code_hash = prev.code_hash AND prev.consumed_at IS NULL
  RETURNING 1
)
SELECT prev.*, prev.consumed_at IS NULL AS fresh FROM prev`,

    /**
     * $1..$8 the family, $9 the tokens (JSON), $10 now. A token hash already stored is left as
     * it was (ON CONFLICT DO NOTHING). The family row is inserted, or, when
     * one exists (the family itself, or a revocation mark written before it), locked by ON
     * CONFLICT DO UPDATE, which answers its latest version: revokeFamily writes the same row
     * the same way, so the two are ordered by one row lock and neither slips between the
     * other's check and write. The tokens are saved only when that row is not revoked.
     */
    issue: `WITH family AS (
  INSERT INTO ${families} AS f (id, client_id, subject, scopes, resource, auth_time, created_at, expires_at)
  VALUES ($1, $2, $3, $4::text[], $5, $6::double precision, $7::double precision, $8::double precision)
  ON CONFLICT (id) DO UPDATE SET
    ${renew('client_id')}, ${renew('subject')}, ${renew('scopes')}, ${renew('resource')},
    ${renew('auth_time')}, ${renew('created_at')}, ${renew('expires_at')},
    revoked_at = CASE WHEN ${gone} THEN NULL ELSE f.revoked_at END,
    retain_until = CASE WHEN ${gone} THEN NULL ELSE f.retain_until END
  RETURNING f.revoked_at IS NULL AS issued
), saved AS (
  INSERT INTO ${tokens} (token_hash, family_id, kind, jti, issued_at, expires_at, confirmation, scopes)
  SELECT n.token_hash, $1, n.kind, n.jti, n.issued_at, n.expires_at, n.confirmation, n.scopes
  FROM family, ${NEW_TOKENS('$9')}
  WHERE family.issued
  ON CONFLICT (token_hash) DO NOTHING
  RETURNING 1
)
SELECT issued FROM family`,

    /** $1 familyId, $2 tokenHash, $3 now. */
    findToken: `SELECT t.token_hash, t.kind, t.jti, t.issued_at, t.expires_at, t.confirmation, t.scopes, ${FAMILY_AS}
FROM ${tokens} AS t JOIN ${families} AS f ON f.id = t.family_id
WHERE t.token_hash = $2 AND t.family_id = $1
  AND t.expires_at > $3::double precision AND t.revoked_at IS NULL AND t.rotated_at IS NULL
  AND f.client_id IS NOT NULL AND f.revoked_at IS NULL AND f.expires_at > $3::double precision`,

    /**
     * $1 familyId, $2 tokenHash, $3 next tokens (JSON), $4 now, $5 graceMs. `cur` locks the
     * refresh token and its family and reads both at their latest committed version; `verdict`
     * decides from that, in the order of the contract (absent, expired, reused in grace,
     * reused, even when an earlier reuse revoked the family, revoked, rotated); then, by the
     * verdict, one of: mark the token rotated and save the new tokens, or revoke the family
     * (reuse; a family revoked already is not written again, so repeated reuses do not contend
     * for its row). A graceMs of 0 turns the window off, whatever `now` says. Concurrent rotations of one token wait for the lock: the first rotates, the next
     * find it rotated.
     */
    rotateRefresh: `WITH cur AS MATERIALIZED (
  SELECT t.token_hash, t.expires_at AS token_expires_at, t.revoked_at AS token_revoked_at,
    t.rotated_at, f.revoked_at AS family_revoked_at, ${FAMILY_AS}
  FROM ${tokens} AS t JOIN ${families} AS f ON f.id = t.family_id
  WHERE t.token_hash = $2 AND t.family_id = $1 AND t.kind = 'refresh_token'
  FOR UPDATE OF t, f
), verdict AS MATERIALIZED (
  SELECT cur.*, CASE
    WHEN family_client_id IS NULL THEN 'absent'
    WHEN token_expires_at <= $4::double precision
      OR family_expires_at <= $4::double precision THEN 'expired'
    WHEN rotated_at IS NOT NULL AND $5::double precision > 0
      AND $4::double precision < rotated_at + $5::double precision THEN 'reused-in-grace'
    WHEN rotated_at IS NOT NULL THEN 'reused'
    WHEN family_revoked_at IS NOT NULL OR token_revoked_at IS NOT NULL THEN 'revoked'
    ELSE 'rotated'
  END AS state
  FROM cur
), rotated AS (
  UPDATE ${tokens} AS t SET rotated_at = $4::double precision
  FROM verdict WHERE t.token_hash = verdict.token_hash AND verdict.state = 'rotated'
  RETURNING 1
), saved AS (
  INSERT INTO ${tokens} (token_hash, family_id, kind, jti, issued_at, expires_at, confirmation, scopes)
  SELECT n.token_hash, $1, n.kind, n.jti, n.issued_at, n.expires_at, n.confirmation, n.scopes
  FROM verdict, ${NEW_TOKENS('$3')}
  WHERE verdict.state = 'rotated'
  ON CONFLICT (token_hash) DO NOTHING
  RETURNING 1
), revoked AS (
  UPDATE ${families} AS f SET revoked_at = $4::double precision
  FROM verdict WHERE f.id = verdict.family_id AND verdict.state = 'reused'
    AND verdict.family_revoked_at IS NULL
  RETURNING 1
)
SELECT * FROM verdict`,

    /** $1 familyId, $2 tokenHash, $3 now. */
    revokeToken: `UPDATE ${tokens} SET revoked_at = $3::double precision
WHERE token_hash = $2 AND family_id = $1 AND revoked_at IS NULL`,
    /**
     * $1 familyId, $2 now, $3 retainUntil. The family's row, or a mark-only row when the family
     * does not exist yet (see issue); the mark is kept until the later of the family's end and
     * every `retainUntil` asked.
     */
    revokeFamily: `INSERT INTO ${families} AS f (id, revoked_at, retain_until)
VALUES ($1, $2::double precision, $3::double precision)
ON CONFLICT (id) DO UPDATE SET
  revoked_at = COALESCE(f.revoked_at, EXCLUDED.revoked_at),
  retain_until = GREATEST(f.retain_until, EXCLUDED.retain_until)`,

    /**
     * $1 key, $2 expiresAt, $3 now. Inserted, or an expired entry taken over: RETURNING gives a
     * row exactly then. Concurrent calls wait on the key's row and see it live.
     */
    remember: `INSERT INTO ${replay} AS r (key, expires_at) VALUES ($1, $2::double precision)
ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at
  WHERE r.expires_at <= $3::double precision
RETURNING 1 AS fresh`,

    /**
     * $1 now, $2 batch size: one batch from each table. Rows locked right now (being consumed,
     * rotated, replaced) are skipped, and the condition is checked again on the row as it is
     * when deleted.
     */
    purge: `WITH interactions AS (${purge(interactions, 'id', 'expires_at')}),
codes AS (${purge(codes, 'code_hash', 'expires_at')}),
families AS (${purge(families, 'id', 'ends_at')}),
tokens AS (${purge(tokens, 'token_hash', 'expires_at')}),
replay AS (${purge(replay, 'key', 'expires_at')})
SELECT (SELECT count(*) FROM interactions)::integer AS interactions,
  (SELECT count(*) FROM codes)::integer AS codes,
  (SELECT count(*) FROM families)::integer AS families,
  (SELECT count(*) FROM tokens)::integer AS tokens,
  (SELECT count(*) FROM replay)::integer AS replay`,
  }
}
