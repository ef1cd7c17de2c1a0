import { ApiBlocksError } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import type { WebhookSignatureErrorCode } from './error.ts'
import { WebhookSignatureError } from './error.ts'

const codes: readonly WebhookSignatureErrorCode[] = [
  'HEADER_MISSING',
  'HEADER_MALFORMED',
  'TIMESTAMP_TOO_OLD',
  'TIMESTAMP_TOO_NEW',
  'SIGNATURE_MISMATCH',
]

describe('WebhookSignatureError', () => {
  for (const code of codes) {
    test(`${code} is an ApiBlocksError answering 400 bad-request`, () => {
      const cause = new Error('underneath')
      const error = new WebhookSignatureError(code, 'What happened.', { cause })
      expect(error).toBeInstanceOf(ApiBlocksError)
      expect(error.code).toBe(code)
      expect(error.message).toBe('What happened.')
      expect(error.cause).toBe(cause)
      expect(error.toProblem()).toMatchObject({ status: 400, detail: 'What happened.' })
      expect(String(error.toProblem().type)).toMatch(/bad-request$/)
    })
  }

  test('names its kind for instanceof across duplicate installs', () => {
    expect(WebhookSignatureError.kind).toBe('webhook-signature.WebhookSignatureError')
  })
})
