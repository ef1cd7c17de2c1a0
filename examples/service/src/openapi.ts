// The OpenAPI 3.1 document of the reference service, generated from the same zod schemas that
// validate request bodies (orders/schema.ts). OpenAPI 3.1 uses JSON Schema 2020-12, which is
// what zod's toJSONSchema emits.
import { z } from 'zod'
import { registry } from './orders/schema.ts'

type Json = Record<string, unknown>

const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` })
const json = (schema: Json): Json => ({ 'application/json': { schema } })

const problem = (description: string): Json => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
})

const problemSchema: Json = {
  type: 'object',
  description: 'RFC 9457 problem details; clients switch on `type` (docs/problems.md).',
  properties: {
    type: { type: 'string', format: 'uri-reference' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
  },
  required: ['type', 'title', 'status'],
  additionalProperties: true,
}

const requestId: Json = {
  description: 'Echoed, or generated when absent or malformed.',
  schema: { type: 'string' },
}

// A request body by its registered id, with every registered example (the issue asks for an
// example for every request body; the test in test/openapi.test.ts checks it).
function body(id: string): Json {
  const schema = registry._idmap.get(id)
  if (schema === undefined) throw new Error(`No schema registered as ${id}`)
  const examples = registry.get(schema)?.examples ?? []
  return {
    required: true,
    content: {
      'application/json': {
        schema: ref(id),
        examples: Object.fromEntries(
          examples.map((value, index) => [`${id}${index + 1}`, { value }]),
        ),
      },
    },
  }
}

// Every /v1 operation needs a bearer token (RFC 6750) from the service's own authorisation server:
// reads read:orders, writes write:orders, webhook endpoints manage:webhooks, and registering one
// read:orders too (an endpoint receives every order's events). 401 and 403 carry WWW-Authenticate.
const READ = [{ oauth2: ['read:orders'] }]
const WRITE = [{ oauth2: ['write:orders'] }]
const MANAGE = [{ oauth2: ['manage:webhooks'] }]
// One requirement object with both scopes: both are needed (OpenAPI 3.1 §4.8.30).
const REGISTER = [{ oauth2: ['manage:webhooks', 'read:orders'] }]
const unauthorized = problem(
  'No token, or an invalid, expired or revoked one (WWW-Authenticate: Bearer, error="invalid_token" when one was sent)',
)
const forbidden = problem(
  'The token lacks the scope (WWW-Authenticate: Bearer error="insufficient_scope")',
)

/** Adds the security requirement and the 401 and 403 answers to each operation of `paths`. */
function secured(paths: Record<string, Json>): Record<string, Json> {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue
      const op = operation as Json
      op['security'] =
        path === '/v1/webhook_endpoints' && method === 'post'
          ? REGISTER
          : path.startsWith('/v1/webhook_endpoints')
            ? MANAGE
            : method === 'get' || method === 'head'
              ? READ
              : WRITE
      op['responses'] = { ...(op['responses'] as Json), 401: unauthorized, 403: forbidden }
    }
  }
  return paths
}

/** The OAuth 2.0 security scheme: the service is its own authorisation server (issuer `serverUrl`). */
function oauthScheme(serverUrl: string): Json {
  const scopes = {
    'read:orders': 'Read orders and operations',
    'write:orders': 'Create, change, cancel and delete orders',
    'manage:webhooks': 'Register webhook endpoints, rotate their secrets, inspect and redeliver',
  }
  return {
    type: 'oauth2',
    description: `Bearer tokens from the service's own authorisation server (issuer ${serverUrl}; discovery at ${serverUrl}/.well-known/openid-configuration). The code flow needs PKCE (S256).`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${serverUrl}/authorize`,
        tokenUrl: `${serverUrl}/token`,
        refreshUrl: `${serverUrl}/token`,
        scopes,
      },
      clientCredentials: { tokenUrl: `${serverUrl}/token`, scopes },
    },
  }
}

/** Builds the OpenAPI 3.1 document; `serverUrl` is where the service listens (and its issuer). */
export function openApiDocument(serverUrl: string): Json {
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> }
  for (const schema of Object.values(schemas)) delete schema['$schema']

  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } }
  const location = (what: string) => ({
    description: `${what}: an absolute URL on the server URL above`,
    schema: { type: 'string', format: 'uri' },
  })
  const orderHeaders = { 'X-Request-Id': requestId }
  const list = (item: Json, description: string): Json => ({
    description,
    headers: {
      'X-Request-Id': requestId,
      Link: {
        description: 'RFC 8288 rel="next" when has_more, on the server URL above',
        schema: { type: 'string' },
      },
    },
    content: json({
      type: 'object',
      properties: {
        data: { type: 'array', items: item },
        has_more: { type: 'boolean' },
        next_cursor: { type: ['string', 'null'] },
      },
      required: ['data', 'has_more', 'next_cursor'],
    }),
  })
  const page = [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
    {
      name: 'after',
      in: 'query',
      description: 'The next_cursor of the previous page (signed; bound to the filters).',
      schema: { type: 'string', maxLength: 1024 },
    },
  ]
  const noEndpoint = problem('No such webhook endpoint (or another client’s)')
  return {
    openapi: '3.1.0',
    info: {
      title: 'api-blocks reference service',
      version: '1.0.0',
      description:
        'Implements the resource conventions of docs/spec.md §4.3 and §7.2 with the api-blocks building blocks. Errors are RFC 9457 problem details.',
    },
    servers: [{ url: serverUrl }],
    paths: secured({
      '/v1/orders': {
        get: {
          operationId: 'listOrders',
          summary: 'List orders (docs/spec.md §2.3 envelope)',
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
            {
              name: 'after',
              in: 'query',
              description: 'The next_cursor of the previous page (signed; bound to the filters).',
              schema: { type: 'string', maxLength: 1024 },
            },
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string', enum: ['open', 'cancelling', 'cancelled'] },
            },
          ],
          responses: {
            200: {
              description: 'A page of orders',
              headers: {
                ...orderHeaders,
                Link: {
                  description:
                    'RFC 8288 rel="next" when has_more: an absolute URL on the server URL above, never on the Host header',
                  schema: { type: 'string' },
                },
              },
              content: json({
                type: 'object',
                properties: {
                  data: { type: 'array', items: ref('Order') },
                  has_more: { type: 'boolean' },
                  next_cursor: { type: ['string', 'null'] },
                },
                required: ['data', 'has_more', 'next_cursor'],
              }),
            },
            400: problem('Malformed query'),
          },
        },
        post: {
          operationId: 'createOrder',
          summary: 'Create an order',
          requestBody: body('CreateOrder'),
          responses: {
            201: {
              description: 'Created',
              headers: { Location: location('The order'), 'X-Request-Id': requestId },
              content: json(ref('Order')),
            },
            400: problem('Malformed JSON'),
            413: problem('Body too large'),
            415: problem('Not JSON'),
            422: problem('Invalid body; `errors` points at each member'),
          },
        },
      },
      '/v1/orders/{id}': {
        parameters: [id],
        get: {
          operationId: 'getOrder',
          responses: {
            200: { description: 'The order', content: json(ref('Order')) },
            404: problem('No such order'),
          },
        },
        put: {
          operationId: 'replaceOrder',
          requestBody: body('ReplaceOrder'),
          responses: {
            200: { description: 'Replaced', content: json(ref('Order')) },
            404: problem('No such order'),
            422: problem('Invalid body'),
          },
        },
        patch: {
          operationId: 'updateOrder',
          description:
            'Absolute assignments only: the members given are set to the values given. An empty object changes nothing (RFC 7396): 200 with the order and its version unchanged.',
          requestBody: body('PatchOrder'),
          responses: {
            200: { description: 'Updated', content: json(ref('Order')) },
            404: problem('No such order'),
            422: problem('Invalid body'),
          },
        },
        delete: {
          operationId: 'deleteOrder',
          responses: { 204: { description: 'Deleted' }, 404: problem('No such order') },
        },
      },
      '/v1/orders/{id}/cancel': {
        parameters: [id],
        post: {
          operationId: 'cancelOrder',
          summary: 'Cancel an order (an action; completes asynchronously)',
          responses: {
            202: {
              description: 'Accepted; poll the operation at Location',
              headers: {
                Location: location('The operation to poll'),
                'Retry-After': { schema: { type: 'integer' } },
              },
              content: json(ref('Operation')),
            },
            404: problem('No such order'),
            409: problem('Order already cancelled'),
          },
        },
      },
      '/v1/webhook_endpoints': {
        get: {
          operationId: 'listWebhookEndpoints',
          summary: 'List the webhook endpoints of the caller (docs/spec.md §2.3 envelope)',
          parameters: page,
          responses: {
            200: list(ref('WebhookEndpoint'), 'A page of endpoints, ids ascending'),
            400: problem('Malformed query'),
          },
        },
        post: {
          operationId: 'createWebhookEndpoint',
          summary: 'Register a receiver of order events',
          description:
            'The URL must be http or https and resolve to public addresses only (an SSRF guard; the service may allow some private origins); it is checked again at every connection. `events` absent: every event type. The answer holds the signing secret, shown only here. Idempotency-Key is not honoured (the answer holds a secret that would be stored).',
          requestBody: body('CreateWebhookEndpoint'),
          responses: {
            201: {
              description: 'Registered',
              headers: { Location: location('The endpoint'), 'X-Request-Id': requestId },
              content: json(ref('WebhookEndpointWithSecret')),
            },
            400: problem('Malformed JSON'),
            409: problem('Too many endpoints for this client'),
            413: problem('Body too large'),
            415: problem('Not JSON'),
            422: problem(
              'Invalid body, or a URL the SSRF guard refuses (private, loopback, link-local or metadata address, or a host that does not resolve); `errors` points at /url',
            ),
          },
        },
      },
      '/v1/webhook_endpoints/{id}': {
        parameters: [id],
        get: {
          operationId: 'getWebhookEndpoint',
          responses: {
            200: { description: 'The endpoint', content: json(ref('WebhookEndpoint')) },
            404: noEndpoint,
          },
        },
        delete: {
          operationId: 'deleteWebhookEndpoint',
          description: 'Its pending deliveries end failed (endpoint-deleted).',
          responses: { 204: { description: 'Deleted' }, 404: noEndpoint },
        },
      },
      '/v1/webhook_endpoints/{id}/rotate_secret': {
        parameters: [id],
        post: {
          operationId: 'rotateWebhookSecret',
          summary: 'Issue a new signing secret',
          description:
            'The new secret signs from now on; the previous one keeps signing for 24 hours (each delivery then carries two signatures), so the receiver can switch without missing one.',
          responses: {
            200: {
              description: 'The endpoint and its new secret, shown only here',
              content: json(ref('WebhookEndpointWithSecret')),
            },
            404: noEndpoint,
          },
        },
      },
      '/v1/webhook_endpoints/{id}/deliveries': {
        parameters: [id],
        get: {
          operationId: 'listWebhookDeliveries',
          summary: 'The deliveries to an endpoint, newest event first, with their attempts',
          parameters: [
            ...page,
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string', enum: ['pending', 'succeeded', 'failed', 'dead'] },
            },
          ],
          responses: {
            200: list(ref('WebhookDelivery'), 'A page of deliveries'),
            400: problem('Malformed query'),
            404: noEndpoint,
          },
        },
      },
      '/v1/webhook_endpoints/{id}/deliveries/{event_id}/redeliver': {
        parameters: [
          id,
          {
            name: 'event_id',
            in: 'path',
            required: true,
            schema: { type: 'string', maxLength: 64 },
          },
        ],
        post: {
          operationId: 'redeliverWebhook',
          summary: 'Send one event to the endpoint again (same webhook-id), whatever its state',
          responses: {
            202: {
              description: 'Queued; the delivery starts again from attempt 0',
              content: json(ref('WebhookDelivery')),
            },
            404: problem('No such endpoint, or no delivery of this event to it'),
          },
        },
      },
      '/v1/operations/{id}': {
        parameters: [id],
        get: {
          operationId: 'getOperation',
          responses: {
            200: { description: 'The operation', content: json(ref('Operation')) },
            404: problem('No such operation'),
          },
        },
      },
    }),
    components: {
      schemas: { ...schemas, Problem: problemSchema },
      securitySchemes: { oauth2: oauthScheme(serverUrl) },
    },
  }
}
