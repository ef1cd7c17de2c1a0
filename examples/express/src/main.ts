// `npm start`: the notes handler inside Express, port $PORT or 3000.
import { createApp } from './app.ts'

const port = Number(process.env['PORT'] ?? 3000)
createApp().listen(port, () => {
  console.log(`Express example on http://localhost:${port}/v1/health`)
})
