/**
 * The default catalog: every api-blocks block answers errors from these types. Their slugs
 * are stable; docs/problems.md documents each. Types resolve against the base given at
 * serialisation (default {@link DEFAULT_PROBLEM_BASE}), except `quota-exceeded`, whose URI is
 * registered by the IANA HTTP Problem Types registry.
 *
 * @module
 */
import { members, nonNegativeInteger, pointers, string, strings } from './internal/members.ts'
import type { ProblemPointer } from './pointer.ts'
import type { ProblemType } from './problem.ts'
import { defineProblem } from './problem.ts'

/**
 * The problem types every api-blocks block answers from.
 *
 * @example
 * ```ts
 * const notFound: ProblemCatalog['notFound'] = problems.notFound
 * ```
 */
export interface ProblemCatalog {
  badRequest: ProblemType
  validation: ProblemType<{ errors: ProblemPointer[] }>
  unauthorized: ProblemType
  insufficientScope: ProblemType<{ required_scopes: string[] }>
  notFound: ProblemType
  methodNotAllowed: ProblemType<{ allowed_methods: string[] }>
  notAcceptable: ProblemType<{ available: string[] }>
  conflict: ProblemType
  preconditionFailed: ProblemType
  payloadTooLarge: ProblemType<{ max_bytes: number }>
  uriTooLong: ProblemType
  unsupportedMediaType: ProblemType<{ accepted: string[] }>
  preconditionRequired: ProblemType
  headerTooLarge: ProblemType<{ header: string }>
  idempotencyKeyMissing: ProblemType
  idempotencyKeyInvalid: ProblemType
  idempotencyKeyReused: ProblemType
  idempotencyKeyInFlight: ProblemType<{ retry_after: number }>
  invalidCursor: ProblemType
  quotaExceeded: ProblemType<{ 'violated-policies': string[] }>
  tooManyRequests: ProblemType
  internal: ProblemType
  serviceUnavailable: ProblemType
}

/**
 * The default problem catalog. Its extension schemas are small Standard Schemas of this
 * package, so using the catalog needs no schema library.
 *
 * @example
 * ```ts
 * throw problems.notFound.error({ detail: 'No order 42' })
 * ```
 */
export const problems: ProblemCatalog = {
  /** 400: the request is malformed (unparsable JSON, a bad parameter, a bad header). */
  badRequest: defineProblem({
    type: 'bad-request',
    title: 'The request is malformed.',
    status: 400,
    titles: { de: 'Die Anfrage ist fehlerhaft.', fr: 'La requête est mal formée.' },
  }),
  /** 422: the body parsed but broke the schema; `errors` points at each offending member. */
  validation: defineProblem({
    type: 'validation-failed',
    title: 'The request body is not valid.',
    status: 422,
    extensions: members<{ errors: ProblemPointer[] }>({ errors: pointers }),
    titles: {
      de: 'Der Inhalt der Anfrage ist ungültig.',
      fr: "Le corps de la requête n'est pas valide.",
    },
  }),
  /** 401: no credentials, or credentials that are not valid. Send `WWW-Authenticate` too. */
  unauthorized: defineProblem({
    type: 'unauthorized',
    title: 'Authentication is required.',
    status: 401,
    titles: { de: 'Anmeldung erforderlich.', fr: 'Authentification requise.' },
  }),
  /** 403: the token lacks a scope the route requires (RFC 6750 §3.1 `insufficient_scope`). */
  insufficientScope: defineProblem({
    type: 'insufficient-scope',
    title: 'The access token lacks a required scope.',
    status: 403,
    extensions: members<{ required_scopes: string[] }>({ required_scopes: strings }),
    titles: {
      de: 'Dem Zugriffstoken fehlt ein benötigter Scope.',
      fr: "Le jeton d'accès n'a pas une portée requise.",
    },
  }),
  /** 404: the resource does not exist, or is hidden from the caller. */
  notFound: defineProblem({
    type: 'not-found',
    title: 'The resource was not found.',
    status: 404,
    titles: { de: 'Die Ressource wurde nicht gefunden.', fr: "La ressource n'existe pas." },
  }),
  /** 405: the method is not supported by the resource; send `Allow` (RFC 9110 §15.5.6). */
  methodNotAllowed: defineProblem({
    type: 'method-not-allowed',
    title: 'The method is not allowed on this resource.',
    status: 405,
    extensions: members<{ allowed_methods: string[] }>({ allowed_methods: strings }),
    titles: {
      de: 'Die Methode ist für diese Ressource nicht erlaubt.',
      fr: "La méthode n'est pas autorisée sur cette ressource.",
    },
  }),
  /** 406: no representation matches the Accept header. */
  notAcceptable: defineProblem({
    type: 'not-acceptable',
    title: 'No acceptable representation is available.',
    status: 406,
    extensions: members<{ available: string[] }>({ available: strings }),
    titles: {
      de: 'Keine annehmbare Darstellung verfügbar.',
      fr: "Aucune représentation acceptable n'est disponible.",
    },
  }),
  /** 409: the write conflicts with the current state of the resource. */
  conflict: defineProblem({
    type: 'conflict',
    title: 'The request conflicts with the current state of the resource.',
    status: 409,
    titles: {
      de: 'Die Anfrage steht im Konflikt mit dem Zustand der Ressource.',
      fr: "La requête est en conflit avec l'état de la ressource.",
    },
  }),
  /** 412: If-Match or If-Unmodified-Since evaluated to false (RFC 9110 §13.1.1). */
  preconditionFailed: defineProblem({
    type: 'precondition-failed',
    title: 'The resource has changed since it was read.',
    status: 412,
    titles: {
      de: 'Die Ressource wurde seit dem Lesen geändert.',
      fr: 'La ressource a changé depuis sa lecture.',
    },
  }),
  /** 413: the body is larger than the limit. */
  payloadTooLarge: defineProblem({
    type: 'payload-too-large',
    title: 'The request body is too large.',
    status: 413,
    extensions: members<{ max_bytes: number }>({ max_bytes: nonNegativeInteger }),
    titles: {
      de: 'Der Inhalt der Anfrage ist zu groß.',
      fr: 'Le corps de la requête est trop volumineux.',
    },
  }),
  /** 414: the request target is longer than the limit. */
  uriTooLong: defineProblem({
    type: 'uri-too-long',
    title: 'The request URI is too long.',
    status: 414,
    titles: { de: 'Die Anfrage-URI ist zu lang.', fr: "L'URI de la requête est trop longue." },
  }),
  /** 415: the body's Content-Type is not one the route accepts. */
  unsupportedMediaType: defineProblem({
    type: 'unsupported-media-type',
    title: 'The request body has an unsupported media type.',
    status: 415,
    extensions: members<{ accepted: string[] }>({ accepted: strings }),
    titles: {
      de: 'Der Medientyp der Anfrage wird nicht unterstützt.',
      fr: "Le type de média de la requête n'est pas pris en charge.",
    },
  }),
  /** 428: a write omitted If-Match where the server requires it (RFC 6585 §3). */
  preconditionRequired: defineProblem({
    type: 'precondition-required',
    title: 'This request must be conditional.',
    status: 428,
    titles: {
      de: 'Diese Anfrage muss bedingt sein.',
      fr: 'Cette requête doit être conditionnelle.',
    },
  }),
  /** 431: a header field (or all of them) is larger than the limit. */
  headerTooLarge: defineProblem({
    type: 'header-too-large',
    title: 'A request header field is too large.',
    status: 431,
    extensions: members<{ header: string }>({ header: string }),
    titles: {
      de: 'Ein Header-Feld der Anfrage ist zu groß.',
      fr: "Un champ d'en-tête de la requête est trop volumineux.",
    },
  }),
  /** 400: the route requires an Idempotency-Key header and the request has none. */
  idempotencyKeyMissing: defineProblem({
    type: 'idempotency-key-missing',
    title: 'An Idempotency-Key header is required.',
    status: 400,
    titles: {
      de: 'Ein Idempotency-Key-Header ist erforderlich.',
      fr: 'Un en-tête Idempotency-Key est requis.',
    },
  }),
  /** 400: the Idempotency-Key is empty, too long or has characters outside the allowed set. */
  idempotencyKeyInvalid: defineProblem({
    type: 'idempotency-key-invalid',
    title: 'The Idempotency-Key header is malformed.',
    status: 400,
    titles: {
      de: 'Der Idempotency-Key-Header ist fehlerhaft.',
      fr: "L'en-tête Idempotency-Key est mal formé.",
    },
  }),
  /** 409 (422 in the `ietf` profile): the key was used before with another request. */
  idempotencyKeyReused: defineProblem({
    type: 'idempotency-key-reused',
    title: 'The Idempotency-Key was used with a different request.',
    status: 409,
    titles: {
      de: 'Der Idempotency-Key wurde mit einer anderen Anfrage verwendet.',
      fr: "L'Idempotency-Key a été utilisée avec une autre requête.",
    },
  }),
  /** 409: a request with the same key is still being processed; retry after Retry-After. */
  idempotencyKeyInFlight: defineProblem({
    type: 'idempotency-key-in-flight',
    title: 'A request with this Idempotency-Key is still in progress.',
    status: 409,
    extensions: members<{ retry_after: number }>({ retry_after: nonNegativeInteger }),
    titles: {
      de: 'Eine Anfrage mit diesem Idempotency-Key wird noch bearbeitet.',
      fr: 'Une requête avec cette Idempotency-Key est encore en cours.',
    },
  }),
  /** 400: a pagination cursor is tampered, expired, foreign or does not match the query. */
  invalidCursor: defineProblem({
    type: 'invalid-cursor',
    title: 'The pagination cursor is not valid for this query.',
    status: 400,
    titles: {
      de: 'Der Seiten-Cursor ist für diese Abfrage ungültig.',
      fr: "Le curseur de pagination n'est pas valide pour cette requête.",
    },
  }),
  /**
   * 429: a rate-limit quota is used up. The type URI and `violated-policies` member are the
   * ones registered by draft-ietf-httpapi-ratelimit-headers (IANA HTTP Problem Types).
   */
  quotaExceeded: defineProblem({
    type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
    title: 'Request quota exceeded.',
    status: 429,
    extensions: members<{ 'violated-policies': string[] }>({ 'violated-policies': strings }),
    allowNames: ['violated-policies'],
    titles: { de: 'Anfragekontingent überschritten.', fr: 'Quota de requêtes dépassé.' },
  }),
  /**
   * 429: the client has too many requests of some kind in progress (RFC 6585 §4), outside a
   * rate-limit quota (that is `quotaExceeded`); say when to retry with `Retry-After`.
   */
  tooManyRequests: defineProblem({
    type: 'too-many-requests',
    title: 'Too many requests.',
    status: 429,
    titles: { de: 'Zu viele Anfragen.', fr: 'Trop de requêtes.' },
  }),
  /** 500: an unexpected fault on the server. Never carries the fault's details. */
  internal: defineProblem({
    type: 'internal',
    title: 'An unexpected error occurred.',
    status: 500,
    titles: {
      de: 'Ein unerwarteter Fehler ist aufgetreten.',
      fr: "Une erreur inattendue s'est produite.",
    },
  }),
  /** 503: a dependency (a store, a queue) is unavailable; retry later. */
  serviceUnavailable: defineProblem({
    type: 'service-unavailable',
    title: 'The service is temporarily unavailable.',
    status: 503,
    titles: {
      de: 'Der Dienst ist vorübergehend nicht verfügbar.',
      fr: 'Le service est temporairement indisponible.',
    },
  }),
}
