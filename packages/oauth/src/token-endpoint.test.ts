import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, ISSUER, json, makeServer, post } from '../test/kit.ts'

const auth = { authorization: basic('demo-backend', BACKEND_SECRET) }

describe('POST /token', () => {
  test('a JSON body MUST be refused with invalid_request (RFC 6749 §4.1.3: form-encoded)', async () => {
    const { server } = await makeServer()
    const response = await server.token(
      new Request(`${ISSUER}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: '{"grant_type":"client_credentials"}',
      }),
    )
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'invalid_request' })
  })

  test('a body over maxFormBytes is refused with invalid_request, unread past the limit', async () => {
    const { server } = await makeServer({ maxFormBytes: 1024 })
    const response = await server.token(
      post('/token', `grant_type=client_credentials&pad=${'x'.repeat(2000)}`, auth),
    )
    expect(response.status).toBe(400)
    expect((await json(response))['error_description']).toContain('1024')
  })

  test('missing grant_type: invalid_request', async () => {
    const { server } = await makeServer()
    expect(await json(await server.token(post('/token', {}, auth)))).toMatchObject({
      error: 'invalid_request',
    })
  })

  test('an unsupported grant is answered before client authentication', async () => {
    const { server } = await makeServer()
    const response = await server.token(post('/token', { grant_type: 'password' }))
    expect(await json(response)).toMatchObject({ error: 'unsupported_grant_type' })
  })

  test('a prototype property is no grant type', async () => {
    const { server } = await makeServer()
    const response = await server.token(post('/token', { grant_type: 'constructor' }, auth))
    expect(await json(response)).toMatchObject({ error: 'unsupported_grant_type' })
  })

  test('GET is 405 with Allow: POST', async () => {
    const { server } = await makeServer()
    const response = await server.token(new Request(`${ISSUER}/token`))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })

  test('failed client authentication is told to onEvent with the claimed id, never the secret', async () => {
    const harness = await makeServer()
    await harness.server.token(
      post(
        '/token',
        { grant_type: 'client_credentials' },
        { authorization: basic('demo-backend', 'guess') },
      ),
    )
    expect(harness.events).toEqual([
      { type: 'client_authentication_failed', code: 'INVALID_CLIENT', clientId: 'demo-backend' },
    ])
    expect(JSON.stringify(harness.events)).not.toContain('guess')
  })
})
