/**
 * RFC 7636 Appendix B: the S256 example.
 * Source: https://www.rfc-editor.org/rfc/rfc7636#appendix-B
 */
export const RFC7636_APPENDIX_B: { readonly verifier: string; readonly challenge: string } = {
  verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
}
