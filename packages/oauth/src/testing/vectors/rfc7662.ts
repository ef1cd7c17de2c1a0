/**
 * RFC 7662 §2.1 and §2.2: the introspection request (Basic client credentials and a token the
 * server never issued) and the inactive response, byte for byte.
 * Source: https://www.rfc-editor.org/rfc/rfc7662#section-2.1 and #section-2.2
 */
export const RFC7662_EXAMPLE: {
  readonly authorization: string
  readonly clientId: string
  readonly clientSecret: string
  readonly body: string
  readonly inactiveResponse: string
  /** The §2.2 active response: the fields (not the values) our active answer must carry. */
  readonly activeResponse: Readonly<Record<string, unknown>>
} = {
  authorization: 'Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW',
  clientId: 's6BhdRkqt3',
  clientSecret: 'gX1fBat3bV',
  body: 'token=mF_9.B5f-4.1JqM&token_type_hint=access_token',
  inactiveResponse: '{"active":false}',
  activeResponse: {
    active: true,
    client_id: 'l238j323ds-23ij4',
    username: 'jdoe',
    scope: 'read write dolphin',
    sub: 'Z5O3upPC88QrAjx00dis',
    aud: 'https://protected.example.net/resource',
    iss: 'https://server.example.com/',
    exp: 1419356238,
    iat: 1419350238,
    extension_field: 'twenty-seven',
  },
}
