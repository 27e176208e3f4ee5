/**
 * Mounting Vigil's routes inside a host application's own HTTP server, as a Fetch-style handler.
 * Run: `node examples/dist/web-handler.js` after `npm run build`, then `curl localhost:3000/vigil/health`.
 */
import { VigilServer } from "@vigil/adapter-http"
import { MemoryAdapter } from "@vigil/adapter-memory"
import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

/** Vigil's routes as `(Request) => Promise<Response>`, over in-memory storage. */
export const makeVigilHandler = () =>
  HttpRouter.toWebHandler(
    VigilServer.routes().pipe(
      Layer.provide(VigilServer.services()),
      Layer.provide([MemoryAdapter.layer, HttpServer.layerServices])
    ),
    { disableLogger: true }
  )

/** A host server that answers its own routes and hands everything under `/vigil` to Vigil. */
export const makeHostServer = () => {
  const vigil = makeVigilHandler()
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith("/vigil/")) {
      res.writeHead(200, { "content-type": "text/plain" }).end("host app\n")
      return
    }
    const response = await vigil.handler(new Request(`http://localhost${req.url.slice("/vigil".length)}`))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  server.on("close", () => void vigil.dispose())
  return server
}

if (import.meta.url === `file://${process.argv[1]}`) {
  makeHostServer().listen(3000, "127.0.0.1", () => console.log("host listening on http://127.0.0.1:3000"))
}
