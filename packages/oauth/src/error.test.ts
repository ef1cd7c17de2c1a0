import { ApiBlocksError } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { OAuthError } from './error.ts'
import { oauthErrorResponse } from './responses.ts'

describe('OAuthError', () => {
  test('carries the wire code, its UPPER_SNAKE code and the RFC 6749 §5.2 status', () => {
    const error = new OAuthError('invalid_grant', 'Nope.')
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toMatchObject({
      error: 'invalid_grant',
      code: 'INVALID_GRANT',
      status: 400,
      message: 'Nope.',
    })
    expect(error.toJSON()).toEqual({ error: 'invalid_grant', error_description: 'Nope.' })
    expect(new OAuthError('invalid_client', 'x').status).toBe(401)
    expect(new OAuthError('server_error', 'x').status).toBe(500)
  })

  test('the token endpoint answer is JSON, never cached; invalid_client has WWW-Authenticate', async () => {
    const response = oauthErrorResponse(
      new OAuthError('invalid_client', 'Who?'),
      'https://as.example.com',
      () => {},
    )
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('pragma')).toBe('no-cache')
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="https://as.example.com"')
    expect(await response.json()).toEqual({ error: 'invalid_client', error_description: 'Who?' })
  })

  test('anything else is a server_error that says nothing of itself', async () => {
    const events: unknown[] = []
    const thrown = new Error('database password is hunter2')
    const response = oauthErrorResponse(thrown, 'r', (event) => events.push(event))
    expect(events).toEqual([{ type: 'server_error', code: 'SERVER_ERROR', error: thrown }])
    expect(response.status).toBe(500)
    const body = await response.text()
    expect(body).not.toContain('hunter2')
    expect(JSON.parse(body)).toMatchObject({ error: 'server_error' })
  })
})
