/**
 * The Fetch handler this example serves: the same code runs on any adapter. It reads only
 * Fetch APIs and answers errors as problems from the api-blocks catalog.
 *
 * @module
 */
import { readText } from '@api-blocks/http'
import { problems } from '@api-blocks/problem-details'

/** Where the handler is mounted; its routes are relative to it. */
export const PREFIX = '/v1'
const MAX_NOTE_BYTES = 1024
const notes: string[] = []

/** A tiny notes API: `GET /v1/health`, `GET /v1/notes`, `POST /v1/notes` (text, ≤ 1 KiB). */
export async function handler(request: Request): Promise<Response> {
  const url = new URL(request.url)
  const route = `${request.method} ${url.pathname.slice(PREFIX.length)}`
  switch (route) {
    case 'GET /health':
      return Response.json({ status: 'ok' })
    case 'GET /notes':
      return Response.json({ notes })
    case 'POST /notes': {
      // Over the limit: a thrown 413 payload-too-large problem.
      const text = await readText(request, { maxBytes: MAX_NOTE_BYTES })
      notes.push(text)
      return Response.json({ id: notes.length, text }, { status: 201 })
    }
    default:
      // Thrown problems become application/problem+json responses in every adapter.
      throw problems.notFound.error({ detail: `Nothing answers ${route}.` })
  }
}
