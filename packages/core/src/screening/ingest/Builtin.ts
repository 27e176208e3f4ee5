/**
 * Vigil's built-in official lists: a dated snapshot of the lists it may ship (publications of a government, facts of
 * a chain), as the real parsers read them from their publishers' files, in one JSON document. A new store starts
 * with it, so a first screening already knows OFAC's sanctioned addresses; `vigil refresh` brings each list up to
 * date from its publisher.
 */
import { Effect, Schema, Stream } from "effect"
import { Chain, Instant } from "../../kernel/index.ts"
import { Category, type ParsedRecord } from "../Intel.ts"
import { IntelIndex } from "../IntelIndex.ts"
import * as Ingest from "./Ingest.ts"
import type { Parser } from "./Parser.ts"
import { keepsWholeHistory } from "./Sources.ts"

/** One record as the parser of its publisher's file made it. */
export const Record = Schema.Struct({
  address: Schema.String,
  family: Chain.Family,
  category: Category,
  reference: Schema.String,
  jurisdiction: Schema.optionalKey(Schema.String),
  entityName: Schema.optionalKey(Schema.String),
  entityType: Schema.optionalKey(Schema.String),
  label: Schema.optionalKey(Schema.String),
  listedAt: Schema.optionalKey(Instant.IsoDate),
  delistedAt: Schema.optionalKey(Instant.IsoDate)
})

/** One list of the snapshot: its identity, its date, where it was read from, and its records. */
export const List = Schema.Struct({
  list: Schema.NonEmptyString,
  kind: Schema.NonEmptyString,
  source: Schema.NonEmptyString,
  /** The date the publisher's file speaks for. */
  asOf: Instant.IsoDate,
  /** The publisher's file it was read from, with its own date and checksum: stored as the version's origin. */
  origin: Schema.NonEmptyString,
  records: Schema.Array(Record)
})
export type List = typeof List.Type

/** The snapshot file. */
export const Snapshot = Schema.Struct({
  format: Schema.Literal(1),
  lists: Schema.Array(List)
})
export type Snapshot = typeof Snapshot.Type

/** Reads a snapshot file's text; a file that does not decode fails with what is wrong. */
export const decode = Schema.decodeUnknownEffect(Schema.fromJsonString(Snapshot))

/** The text a snapshot is written as: one line per record, so a rebuild's diff reads as the lists' changes. */
export const encode = (snapshot: Snapshot): string => {
  const lists = snapshot.lists.map((l) => {
    const { records, ...head } = l
    const body = records.map((r) => `    ${JSON.stringify(r)}`).join(",\n")
    return `  ${JSON.stringify(head).slice(0, -1)},"records":[\n${body}\n  ]}`
  })
  return `{"format":1,"lists":[\n${lists.join(",\n")}\n]}\n`
}

/** A parser handing back records already read. */
const given = (list: List): Parser => ({
  write: () => [],
  end: () => list.records as ReadonlyArray<ParsedRecord>,
  asOf: () => list.asOf,
  skipped: () => ({ count: 0, reasons: [] })
})

/** Ingests one list of the snapshot as a version of its list (official), through the same guard as any ingest. */
export const ingestList = (list: List) =>
  Ingest.run(
    {
      kind: list.kind,
      list: list.list,
      source: list.source,
      mode: keepsWholeHistory(list.kind) ? "history" : "snapshot",
      origin: list.origin,
      authority: "official",
      defaultAuthority: "official"
    },
    given(list),
    Stream.make(new TextEncoder().encode(JSON.stringify(list)))
  )

/**
 * Starts a new store with the snapshot: when nothing was ever committed to the store's lists, the snapshot is read
 * (only then) and each of its lists ingested; a store that holds or held any list (even one since deleted) is left
 * as it is. The outcomes of the lists ingested (none for a store that was not new).
 */
export const seed = <E, R>(snapshot: Effect.Effect<Snapshot, E, R>) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex
    if ((yield* index.generation) !== 0 || (yield* index.lists).length > 0) return []
    return yield* Effect.forEach((yield* snapshot).lists, ingestList)
  })
