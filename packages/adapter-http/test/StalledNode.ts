/** Test helper: a "node" on loopback that takes every request and never answers it. */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A node that never answers: its URL, and `close` (ends the requests it holds, then the server). */
export const start = async (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const held: Array<ServerResponse> = []
  const stalled = createServer((_, res) => void held.push(res))
  await new Promise<void>((done) => stalled.listen(0, "127.0.0.1", () => done()))
  return {
    url: `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`,
    close: async () => {
      for (const res of held) res.destroy()
      stalled.closeAllConnections()
      await new Promise<void>((done) => stalled.close(() => done()))
    }
  }
}
