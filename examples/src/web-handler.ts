/**
 * Mounting Vigil's routes inside a host application's own HTTP server, as a Fetch-style handler: the host
 * forwards each request under `/vigil` (method, headers and body) and writes back Vigil's response.
 * Run: `node examples/dist/web-handler.js` after `npm run build`, then `curl localhost:3000/vigil/health`.
 */
import { VigilServer } from "@vigil/adapter-http"
import { MemoryAdapter } from "@vigil/adapter-memory"
import { Engine, type StorageProbe, type StoreError } from "@vigil/core"
import { Outbound } from "@vigil/engine"
import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

/** Vigil's routes as `(Request) => Promise<Response>`, over in-memory storage (or the storage layer given). */
export const makeVigilHandler = (
  storage: Layer.Layer<Engine.Storage | StorageProbe.StorageProbe, StoreError.StoreError> = MemoryAdapter.layer
) =>
  HttpRouter.toWebHandler(
    VigilServer.routes().pipe(
      Layer.provide(Engine.layer().pipe(Layer.provide(Outbound.layer()))),
      Layer.provideMerge(storage),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )

/** The whole body of a Node request. */
const bodyOf = async (req: IncomingMessage): Promise<Uint8Array | undefined> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return chunks.length === 0 ? undefined : Buffer.concat(chunks)
}

/** The Fetch `Request` of a Node request, its path taken relative to `prefix`. */
export const toRequest = async (req: IncomingMessage, prefix: string): Promise<Request> => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  const method = req.method ?? "GET"
  const body = method === "GET" || method === "HEAD" ? undefined : await bodyOf(req)
  return new Request(`http://${req.headers.host ?? "localhost"}${(req.url ?? "/").slice(prefix.length)}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body })
  })
}

/** A host server that answers its own routes and hands everything under `/vigil` to Vigil. */
export const makeHostServer = (vigil = makeVigilHandler()) => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith("/vigil/")) {
      res.writeHead(200, { "content-type": "text/plain" }).end("host app\n")
      return
    }
    const response = await vigil.handler(await toRequest(req, "/vigil"))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  server.on("close", () => void vigil.dispose())
  return server
}

if (import.meta.url === `file://${process.argv[1]}`) {
  makeHostServer().listen(3000, "127.0.0.1", () => console.log("host listening on http://127.0.0.1:3000"))
}
