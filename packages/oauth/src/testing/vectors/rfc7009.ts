/**
 * RFC 7009 §2.1: the revocation request of a refresh token the server never issued; the
 * answer is 200 all the same (§2.2).
 * Source: https://www.rfc-editor.org/rfc/rfc7009#section-2.1
 */
export const RFC7009_EXAMPLE: {
  readonly authorization: string
  readonly clientId: string
  readonly clientSecret: string
  readonly body: string
  readonly status: number
} = {
  authorization: 'Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW',
  clientId: 's6BhdRkqt3',
  clientSecret: 'gX1fBat3bV',
  body: 'token=45ghiukldjahdnhzdauz&token_type_hint=refresh_token',
  status: 200,
}
