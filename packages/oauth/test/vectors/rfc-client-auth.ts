/**
 * Basic client credentials from the RFC examples: the header field and the id and secret it
 * decodes to.
 * Sources: RFC 6749 §2.3.1 (https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1), RFC 7662
 * §2.1 (https://www.rfc-editor.org/rfc/rfc7662#section-2.1), RFC 7009 §2.1
 * (https://www.rfc-editor.org/rfc/rfc7009#section-2.1).
 */
export const BASIC_EXAMPLES: readonly {
  readonly source: string
  readonly header: string
  readonly id: string
  readonly secret: string
}[] = [
  {
    source: 'RFC 6749 §2.3.1',
    header: 'Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3',
    id: 's6BhdRkqt3',
    secret: '7Fjfp0ZBr1KtDRbnfVdmIw',
  },
  {
    source: 'RFC 7662 §2.1 and RFC 7009 §2.1',
    header: 'Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW',
    id: 's6BhdRkqt3',
    secret: 'gX1fBat3bV',
  },
]
