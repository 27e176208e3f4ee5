/** IntelIndex in process memory: staged versions in a map, each commit applied in one synchronous step. */
import { type Intel, IntelIndex, StoreError } from "@vigil/core"
import { Effect, Layer } from "effect"

interface Staged {
  readonly info: IntelIndex.StageInfo
  readonly records: Array<Intel.ParsedRecord>
}

const notStaged = (operation: string, version: number) =>
  new StoreError.StoreError({ reason: "Conflict", operation, message: `version ${version} is not staged` })

const make = Effect.sync(() => {
  let nextVersion = 1
  let generation = 0
  /** The last version number of deleted lists, so a list made again under the name numbers on. */
  const removed = new Map<string, number>()
  const staged = new Map<number, Staged>()
  const byList = new Map<string, Array<Intel.IntelRecord>>()
  const current = new Map<
    string,
    { readonly version: number; readonly number: number; readonly info: IntelIndex.VersionInfo }
  >()

  return IntelIndex.IntelIndex.of({
    stage: (info) =>
      Effect.sync(() => {
        for (const [id, s] of staged) if (s.info.list === info.list) staged.delete(id)
        const id = nextVersion++
        staged.set(id, { info, records: [] })
        return id
      }),
    append: (version, records) =>
      Effect.suspend(() => {
        const s = staged.get(version)
        if (s === undefined) return Effect.fail(notStaged("IntelIndex.append", version))
        for (const r of records) s.records.push(r)
        return Effect.void
      }),
    commit: (version, completion) =>
      Effect.suspend((): Effect.Effect<IntelIndex.CommitOutcome, StoreError.StoreError | IntelIndex.ShrinkRefused> => {
        const s = staged.get(version)
        if (s === undefined) return Effect.fail(notStaged("IntelIndex.commit", version))
        const info: IntelIndex.VersionInfo = { ...s.info, ...completion }
        const existing = byList.get(info.list) ?? []
        const active = new Map(
          existing.filter((r) => r.delistedAt === undefined).map((r) => [IntelIndex.recordKey(r), r])
        )
        const plan = IntelIndex.planCommit(info, new Set(active.keys()), s.records)
        const refused = IntelIndex.shrinkRefusal(info.list, plan, new Set(active.keys()), completion)
        if (refused !== undefined) return Effect.fail(refused)
        const closing = new Set(plan.close)
        const kept = plan.replaceAll
          ? []
          : existing.map((r) =>
              r.delistedAt === undefined && closing.has(IntelIndex.recordKey(r)) ? { ...r, delistedAt: info.asOf } : r
            )
        byList.set(info.list, [...kept, ...plan.insert])
        const number = (current.get(info.list)?.number ?? removed.get(info.list) ?? 0) + 1
        current.set(info.list, { version, number, info })
        generation++
        staged.delete(version)
        return Effect.succeed({
          list: info.list,
          version: number,
          added: plan.added,
          delisted: plan.delisted,
          unchanged: plan.unchanged
        })
      }),
    remove: (list) =>
      Effect.sync(() => {
        const entry = current.get(list)
        if (entry === undefined) return undefined
        const records = byList.get(list)?.length ?? 0
        byList.delete(list)
        current.delete(list)
        removed.set(list, entry.number)
        generation++
        return { list, version: entry.number, records }
      }),
    discard: (version) => Effect.sync(() => void staged.delete(version)),
    lookup: (addresses) =>
      Effect.sync(() => {
        const wanted = new Set(addresses)
        return [...byList.values()].flatMap((records) => records.filter((r) => wanted.has(r.address)))
      }),
    generation: Effect.sync(() => generation),
    lists: Effect.sync(() =>
      [...current.values()]
        .sort((a, b) => (a.info.list < b.info.list ? -1 : a.info.list > b.info.list ? 1 : 0))
        .map(({ number, info }) => {
          const records = byList.get(info.list) ?? []
          const active = records.filter((r) => r.delistedAt === undefined).length
          return {
            list: info.list,
            source: info.source,
            kind: info.kind,
            version: number,
            asOf: info.asOf,
            contentHash: info.contentHash,
            origin: info.origin,
            ingestedAt: info.ingestedAt,
            active,
            delisted: records.length - active
          }
        })
    )
  })
})

/** A layer with a fresh, empty in-memory IntelIndex. */
export const layer: Layer.Layer<IntelIndex.IntelIndex> = Layer.effect(IntelIndex.IntelIndex)(make)
