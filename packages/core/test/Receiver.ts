/** Test helper: a real HTTPS webhook receiver on loopback, with a throwaway CA made by openssl. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A CA and a server certificate for 127.0.0.1 and localhost, as PEM. */
export interface Certificates {
  readonly ca: string
  readonly key: string
  readonly cert: string
  /** A file holding `ca`, for VIGIL_WEBHOOK_CA_FILE. */
  readonly caFile: string
  readonly dispose: () => void
}

/** Makes a fresh CA and server certificate (P-256, valid two days). */
export const certificates = (): Certificates => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-ca-"))
  const run = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  run("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Vigil Test CA")
  run("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
  run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf"
  )
  return {
    ca: readFileSync(join(dir, "ca.pem"), "utf8"),
    key: readFileSync(join(dir, "server.key"), "utf8"),
    cert: readFileSync(join(dir, "server.pem"), "utf8"),
    caFile: join(dir, "ca.pem"),
    dispose: () => rmSync(dir, { recursive: true, force: true })
  }
}

/** One request the receiver got. */
export interface Received {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
  readonly at: number
  /** The status answered (0 when the receiver hung). */
  readonly status: number
}

/** How the receiver answers its n-th request (0-based) to `path`: a status, or "hang" (never answer). */
export type Behaviour = (n: number, path: string) => number | "hang"

/** A running receiver. */
export interface Receiver {
  readonly url: (path: string) => string
  readonly port: number
  readonly received: Array<Received>
  /** Resolves when `predicate` holds for what was received (polling every 20 ms; rejects after `ms`). */
  readonly until: (predicate: (received: ReadonlyArray<Received>) => boolean, ms?: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** Starts a receiver on 127.0.0.1 (on `port`, or a free one). */
export const start = (certs: Certificates, behaviour: Behaviour = () => 200, port = 0): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    const received: Array<Received> = []
    const counts = new Map<string, number>()
    const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      let body = ""
      req.setEncoding("utf8")
      req.on("data", (c: string) => (body += c))
      req.on("end", () => {
        const path = req.url ?? "/"
        const n = counts.get(path) ?? 0
        counts.set(path, n + 1)
        const answer = behaviour(n, path)
        received.push({ path, headers: req.headers, body, at: Date.now(), status: answer === "hang" ? 0 : answer })
        if (answer === "hang") return
        res.writeHead(answer, { "content-type": "text/plain" }).end("ok")
      })
    })
    server.on("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      const bound = typeof address === "object" && address !== null ? address.port : port
      resolve({
        port: bound,
        url: (path) => `https://127.0.0.1:${bound}${path}`,
        received,
        until: (predicate, ms = 15_000) =>
          new Promise((done, fail) => {
            const started = Date.now()
            const check = () => {
              if (predicate(received)) return done()
              if (Date.now() - started > ms) {
                return fail(new Error(`receiver condition not met within ${ms} ms; got ${received.length} requests`))
              }
              setTimeout(check, 20)
            }
            check()
          }),
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/**
 * The alert notifications among `received` (answered 200), by alert id: the transaction each names, and the
 * distinct deliveries (webhook-ids) that carried it — one each when every alert was sent once.
 */
export const alertsAt = (received: ReadonlyArray<Received>) => {
  const byAlert = new Map<string, { tx: string; deliveries: Set<string> }>()
  for (const got of received) {
    if (got.status !== 200) continue
    const body = JSON.parse(got.body)
    if (body.type !== "alert") continue
    const seen = byAlert.get(body.data.id) ?? { tx: body.data.txHash, deliveries: new Set<string>() }
    seen.deliveries.add(String(got.headers["webhook-id"]))
    byAlert.set(body.data.id, seen)
  }
  return byAlert
}
