/** Opens what a user names for ingest, a file path or an http(s) URL, as a byte stream; `.bz2` is decompressed on the fly. */
import { Ingestion, type IntelIndex, type StoreError } from "@vigil/core"
import { Effect, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import { createReadStream, statSync } from "node:fs"
import { resolve } from "node:path"
import { Readable } from "node:stream"
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import { Worker } from "node:worker_threads"

/** What was named cannot be read: a missing file, an unreachable URL, a broken bzip2 stream. */
export class InputError extends Schema.TaggedError<InputError>()("InputError", { message: Schema.String }) {}

/** An opened input: its bytes, its size when known, and how much of it has been read (both for progress). */
export interface Input {
  readonly bytes: Stream.Stream<Uint8Array, InputError>
  /** Bytes of the file or response as stored (compressed, for `.bz2`). */
  readonly size: number | undefined
  /** Bytes of the file or response read so far, in the same measure as `size`. */
  readonly read: () => number
}

/** Counts what passes through, before any decompression. */
const counting = (source: AsyncIterable<Uint8Array>) => {
  let read = 0
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      read += chunk.length
      yield chunk
    }
  }
  return { chunks: counted(), read: () => read }
}

/** Node's native SHA-256 for an ingest's content hash (the same digest as the core's, several times faster). */
export const sha256: () => Ingestion.Ingest.ContentHash = () => {
  const hash = createHash("sha256")
  return { update: (bytes) => void hash.update(bytes), hex: () => hash.digest("hex") }
}

/**
 * Ingests an opened input's bytes as `Ingest.run` does, hashing them with Node's SHA-256: how every ingest of a
 * Node process (the CLI, the facade, the list refresh) runs.
 */
export const ingest = <E>(
  request: Ingestion.Ingest.Request,
  parser: Ingestion.Parser.Parser,
  bytes: Stream.Stream<Uint8Array, E>,
  onProgress?: (bytes: number, records: number) => void
): Effect.Effect<
  Ingestion.Ingest.Outcome,
  Ingestion.Ingest.IngestFailed | StoreError.StoreError | E,
  IntelIndex.IntelIndex | IntelIndex.Versions
> =>
  Ingestion.Ingest.run(request, parser, bytes, onProgress).pipe(
    Effect.provideService(Ingestion.Ingest.ContentHashing, sha256)
  )

const isUrl = (origin: string) => /^https?:\/\//i.test(origin)

/** What identifies an input wherever it is named from: a URL as given, a file by its absolute path. */
export const originKey = (origin: string): string => (isUrl(origin) ? origin : resolve(origin))

/** What went wrong, with the underlying reason a fetch error keeps in its cause (refused, a certificate, …). */
const reason = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const inner = cause.cause instanceof Error ? cause.cause.message : undefined
  return inner === undefined || cause.message.includes(inner) ? cause.message : `${cause.message} (${inner})`
}

const failure = (origin: string) => (cause: unknown) =>
  new InputError({ message: `cannot read ${origin}: ${reason(cause)}` })

const workerUrl = new URL("../worker/bunzip2.mjs", import.meta.url)

type FromWorker =
  { readonly more: true } | { readonly piece: Uint8Array } | { readonly failed: string } | { readonly done: true }

/**
 * Decompresses bzip2 as it streams, on a worker thread: decoding (most of an ingest's time over a `.bz2`) runs
 * on one core while the caller parses on another. The worker asks for compressed input as it needs it and keeps
 * at most two decoded pieces (a bzip2 block each, under 1 MB for common files) not yet taken; when the reader
 * stops early or fails, the worker is stopped with it.
 */
async function* decompress(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const worker = new Worker(workerUrl, { workerData: { ahead: 2 } })
  const inbox: Array<FromWorker> = []
  let wake: (() => void) | undefined
  const deliver = (message: FromWorker) => {
    inbox.push(message)
    wake?.()
  }
  worker.on("message", deliver)
  worker.on("error", (e: Error) => deliver({ failed: e.message }))
  worker.on("exit", (code) => deliver({ failed: `the decoder stopped (exit code ${code})` }))
  const chunks = source[Symbol.asyncIterator]()
  try {
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve))
      wake = undefined
      const message = inbox.shift()!
      if ("more" in message) {
        const next = await chunks.next()
        worker.postMessage(next.done === true ? { end: true } : { chunk: next.value })
      } else if ("piece" in message) {
        yield message.piece
        worker.postMessage({ taken: true })
      } else if ("failed" in message) {
        throw new Error(`bzip2: ${message.failed}`)
      } else return
    }
  } finally {
    worker.removeAllListeners()
    await worker.terminate()
    await chunks.return?.()
  }
}

/** Opens `origin`; a missing file or an unreachable URL fails at once with one clear message. */
export const open = (origin: string): Effect.Effect<Input, InputError> =>
  Effect.gen(function* () {
    let readable: Readable
    let size: number | undefined
    if (isUrl(origin)) {
      const response = yield* Effect.tryPromise({ try: () => fetch(origin), catch: failure(origin) })
      if (!response.ok || response.body === null) {
        return yield* new InputError({ message: `cannot read ${origin}: HTTP ${response.status}` })
      }
      const length = Number(response.headers.get("content-length"))
      size = Number.isFinite(length) && length > 0 ? length : undefined
      readable = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)
    } else {
      const stat = yield* Effect.try({ try: () => statSync(origin), catch: failure(origin) })
      if (!stat.isFile()) return yield* new InputError({ message: `cannot read ${origin}: not a file` })
      size = stat.size
      readable = createReadStream(origin)
    }
    const bz2 = /\.bz2$/i.test(isUrl(origin) ? new URL(origin).pathname : origin)
    const raw = counting(readable)
    const decoded: AsyncIterable<Uint8Array> = bz2 ? decompress(raw.chunks) : raw.chunks
    return { size, read: raw.read, bytes: Stream.fromAsyncIterable(decoded, failure(origin)) }
  })
