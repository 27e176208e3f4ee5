/**
 * The console's static files at `/console/`: read once when the server starts (a few tens of KB), each answered
 * with its content type, a strict Content-Security-Policy (nothing but this origin: no inline script, no other
 * host), and caching by name (assets carry a content hash; the page is always revalidated). The files come from
 * the console package's build, whose folder the host names.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join } from "node:path"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"

/** The policy of every console response: this origin only; no frames, no plugins, no inline code. */
export const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const types: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json"
}

const headers = (cache: string) => ({
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": cache
})

/** Whether `dir` holds a built console (its `index.html`). */
export const isBuilt = (dir: string): boolean => existsSync(join(dir, "index.html"))

/** The console's routes over the build in `dir` (`index.html` and `assets/`). */
export const layer = (dir: string): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  Layer.unwrap(
    Effect.sync(() => {
      const page = readFileSync(join(dir, "index.html"))
      const assetsDir = join(dir, "assets")
      const assets = new Map(
        (existsSync(assetsDir) ? readdirSync(assetsDir) : []).map((name) => [name, readFileSync(join(assetsDir, name))])
      )
      const index = HttpServerResponse.uint8Array(page, {
        contentType: types[".html"]!,
        headers: headers("no-cache")
      })
      return Layer.mergeAll(
        // `/console` and `/console/` alike (the router ignores a trailing slash); assets are named from the root.
        HttpRouter.add("GET", "/console", index),
        HttpRouter.add("GET", "/console/assets/:name", (request) => {
          const name = decodeURIComponent(request.url.slice(request.url.lastIndexOf("/") + 1).split("?")[0] ?? "")
          const body = assets.get(name)
          return Effect.succeed(
            body === undefined
              ? HttpServerResponse.text(`no such console file: ${name}`, {
                  status: 404,
                  headers: headers("no-store")
                })
              : HttpServerResponse.uint8Array(body, {
                  contentType: types[extname(name)] ?? "application/octet-stream",
                  headers: headers("public, max-age=31536000, immutable")
                })
          )
        })
      )
    })
  )
