/** Opens what a user names for ingest, a file path or an http(s) URL, as a byte stream; `.bz2` is decompressed on the fly. */
import { Ingestion, type IntelIndex, type StoreError } from "@vigil/core"
import { Effect, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import { createReadStream, statSync } from "node:fs"
import { resolve } from "node:path"
import { Readable } from "node:stream"
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import unbzip2 from "unbzip2-stream"

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

/**
 * Decompresses bzip2 as it streams. The decoder ignores backpressure, so it is fed 16 KB of compressed input
 * at a time and each decoded piece is handed on before more is fed: at most about one bzip2 block is buffered.
 */
async function* decompress(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const decoder = unbzip2()
  const out: Array<Uint8Array> = []
  let failure: Error | undefined
  let ended = false
  decoder.on("data", (chunk: Uint8Array) => out.push(chunk))
  decoder.on("error", (e: Error) => (failure = new Error(`bzip2: ${e.message}`)))
  const done = new Promise<void>((resolve) =>
    decoder.on("end", () => {
      ended = true
      resolve()
    })
  )
  for await (const chunk of source) {
    for (let i = 0; i < chunk.length; i += 16_384) {
      decoder.write(Buffer.from(chunk.subarray(i, i + 16_384)))
      if (failure) throw failure
      while (out.length > 0) yield out.shift()!
    }
  }
  decoder.end()
  if (!ended) await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 1_000))])
  if (failure) throw failure
  while (out.length > 0) yield out.shift()!
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
