// `npm start`: the notes handler on Hono and @hono/node-server, port $PORT or 3000.
import { serve } from '@hono/node-server'
import { createApp } from './app.ts'
import { handler } from './handler.ts'

const port = Number(process.env['PORT'] ?? 3000)
serve({ fetch: createApp(handler).fetch, port }, (info) => {
  console.log(`Hono example on http://localhost:${info.port}/v1/health`)
})
