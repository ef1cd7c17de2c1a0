// `npm start`: the notes handler inside Fastify, port $PORT or 3000.
import { createApp } from './app.ts'

const port = Number(process.env['PORT'] ?? 3000)
const app = await createApp()
await app.listen({ port })
console.log(`Fastify example on http://localhost:${port}/v1/health`)
