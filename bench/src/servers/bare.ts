/**
 * The baseline: a bare node:http server answering JSON, the least any Node HTTP server can do.
 * `GET /health` returns a small fixed body; `POST /api/v3/intel` reads and parses the JSON body and returns a
 * fixed body the size of a real v3 result (no authentication, quota, lookup or scoring).
 */
import { createServer } from "node:http"
import { Chain } from "@vigil/core"

const body = JSON.stringify({
  status: "ok",
  version: "0.0.0",
  storage: { kind: "none", schema_version: 0 },
  uptime_seconds: 0
})

const intel = JSON.stringify({
  address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  score: 0,
  risk_level: "minimal",
  confidence: 0.9,
  flags: { sanctioned: false, blacklisted: false, threat_actor: false, smart_money: false },
  entity: { name: "Unknown Entity", type: "wallet", category: "unknown" },
  signals: [],
  labels: [],
  recommendation: {
    action: "ALLOW",
    summary: "No risk found in the intelligence consulted: standard processing.",
    details: "No record in any list consulted names this address.",
    ai_enhanced: false
  },
  metadata: {
    version: "v3",
    latency_ms: 0,
    sources_used: 1,
    is_complete: true,
    timestamp: new Date().toISOString(),
    chain: {
      family: "evm",
      networks: Chain.networksOf.evm,
      normalized: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
    },
    as_of: "2026-01-01"
  }
})

const server = createServer((request, response) => {
  if (request.method === "POST" && request.url === "/api/v3/intel") {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (text += chunk))
    request.on("end", () => {
      try {
        JSON.parse(text)
      } catch {
        response.writeHead(400).end()
        return
      }
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(intel) })
      response.end(intel)
    })
    return
  }
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
