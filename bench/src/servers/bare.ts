/** The baseline: a bare node:http server answering JSON, the least any Node HTTP server can do. */
import { createServer } from "node:http"

const body = JSON.stringify({
  status: "ok",
  version: "0.0.0",
  storage: { kind: "none", schema_version: 0 },
  uptime_seconds: 0
})

const server = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/health") {
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    response.end(body)
    return
  }
  response.writeHead(404).end()
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address !== null && typeof address === "object") console.log(`bare listening on http://127.0.0.1:${address.port}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
