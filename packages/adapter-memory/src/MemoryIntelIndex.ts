/** IntelIndex in process memory: versions and what they contained in maps, each change applied in one synchronous step. */
import { type Calibration, type Intel, IntelIndex, StoreError } from "@vigil/core"
import { Effect, type Layer } from "effect"

/** A version of a list: staged until committed; withdrawn by a rollback or by deleting the list. */
interface Version {
  readonly id: number
  info: IntelIndex.VersionInfo
  readonly records: Array<Intel.ParsedRecord>
  state: "staged" | "committed"
  withdrawn: boolean
  /** The list's own number, once committed. */
  number: number
}

const notStaged = (operation: string, version: number) =>
  new StoreError.StoreError({ reason: "Conflict", operation, message: `version ${version} is not staged` })

const make = Effect.sync(() => {
  let nextVersion = 1
  let generation = 0
  const versions = new Map<number, Version>()
  /** Committed versions of each list, in the order they were committed (withdrawn ones included, for numbering). */
  const history = new Map<string, Array<Version>>()
  const byList = new Map<string, ReadonlyArray<Intel.IntelRecord>>()
  /** The latest refused refresh of each list. */
  const refusals = new Map<string, IntelIndex.ListRefusal>()
  const models: Array<Calibration.Stored> = []

  const staged = (id: number) => {
    const v = versions.get(id)
    return v?.state === "staged" ? v : undefined
  }
  const inEffect = (list: string) => (history.get(list) ?? []).filter((v) => !v.withdrawn)
  /** The list's version in force: its newest in date (the later ingested within a date). */
  const currentOf = (list: string) => IntelIndex.inDateOrder(inEffect(list)).at(-1)
  const rebuild = (list: string) => {
    const records = IntelIndex.rebuild(inEffect(list))
    byList.set(list, records)
    return records
  }
  const amendOutcome = (list: string, version: number): IntelIndex.AmendOutcome => {
    const current = currentOf(list)!
    const records = byList.get(list) ?? []
    const active = records.filter((r) => r.delistedAt === undefined).length
    return {
      list,
      version,
      current: current.number,
      asOf: current.info.asOf,
      active,
      delisted: records.length - active
    }
  }
  const noList = (list: string) =>
    Effect.fail(new IntelIndex.AmendRefused({ list, message: `there is no list named ${list}` }))

  const index: IntelIndex.All = {
    stage: (info) =>
      Effect.sync(() => {
        for (const [id, v] of versions) if (v.state === "staged" && v.info.list === info.list) versions.delete(id)
        const id = nextVersion++
        versions.set(id, {
          id,
          info: { ...info, asOf: "", contentHash: "" },
          records: [],
          state: "staged",
          withdrawn: false,
          number: 0
        })
        return id
      }),
    append: (version, records) =>
      Effect.suspend(() => {
        const v = staged(version)
        if (v === undefined) return Effect.fail(notStaged("IntelIndex.append", version))
        for (const r of records) v.records.push(r)
        return Effect.void
      }),
    commit: (version, completion) =>
      Effect.suspend(
        (): Effect.Effect<
          IntelIndex.CommitOutcome,
          StoreError.StoreError | IntelIndex.ShrinkRefused | IntelIndex.AmendRefused
        > => {
          const v = staged(version)
          if (v === undefined) return Effect.fail(notStaged("IntelIndex.commit", version))
          const info: IntelIndex.VersionInfo = { ...v.info, ...completion }
          const list = info.list
          const existing = byList.get(list) ?? []
          const before = IntelIndex.activeKeysOf(existing)
          const newest = currentOf(list)
          const backfill = newest !== undefined && info.asOf < newest.info.asOf
          let records: ReadonlyArray<Intel.IntelRecord>
          let counts: { readonly added: number; readonly delisted: number; readonly unchanged: number }
          if (backfill) {
            records = IntelIndex.rebuild([...inEffect(list), { info, records: v.records }])
            counts = IntelIndex.intervalChanges(existing, records)
          } else {
            const applied = IntelIndex.apply(existing, info, v.records)
            records = applied.records
            counts = applied.plan
          }
          const refused = IntelIndex.shrinkRefusal(list, before, IntelIndex.activeKeysOf(records), completion)
          if (refused !== undefined) return Effect.fail(refused)
          const committed = history.get(list) ?? []
          v.info = info
          v.state = "committed"
          v.number = committed.length + 1
          history.set(list, [...committed, v])
          byList.set(list, records)
          generation++
          return Effect.succeed({
            list,
            version: v.number,
            added: counts.added,
            delisted: counts.delisted,
            unchanged: counts.unchanged
          })
        }
      ),
    remove: (list) =>
      Effect.sync(() => {
        const current = currentOf(list)
        if (current === undefined) return undefined
        const records = byList.get(list)?.length ?? 0
        for (const v of inEffect(list)) v.withdrawn = true
        for (const [id, v] of versions) if (v.state === "staged" && v.info.list === list) versions.delete(id)
        byList.delete(list)
        generation++
        return { list, version: current.number, records }
      }),
    rollback: (list) =>
      Effect.suspend(() => {
        const current = currentOf(list)
        if (current === undefined) return noList(list)
        if (inEffect(list).length < 2) {
          return Effect.fail(
            new IntelIndex.AmendRefused({
              list,
              message: `${list} has only one version in effect (version ${current.number}); nothing to roll back to (--delete removes the list)`
            })
          )
        }
        current.withdrawn = true
        rebuild(list)
        generation++
        return Effect.succeed(amendOutcome(list, current.number))
      }),
    redate: (list, version, asOf) =>
      Effect.suspend(() => {
        if (currentOf(list) === undefined) return noList(list)
        const v = (history.get(list) ?? [])[version - 1]
        if (v === undefined || v.withdrawn) {
          return Effect.fail(
            new IntelIndex.AmendRefused({ list, message: `${list} has no version ${version} in effect` })
          )
        }
        v.info = { ...v.info, asOf }
        rebuild(list)
        generation++
        return Effect.succeed(amendOutcome(list, version))
      }),
    discard: (version) =>
      Effect.sync(() => {
        if (staged(version) !== undefined) versions.delete(version)
      }),
    lookup: (addresses) =>
      Effect.sync(() => {
        const wanted = new Set(addresses)
        return [...byList.values()].flatMap((records) => records.filter((r) => wanted.has(r.address)))
      }),
    scan: (after, limit) =>
      Effect.sync(() => {
        const all = [...byList.values()].flat().filter((r) => r.address > after)
        const addresses = [...new Set(all.map((r) => r.address))].sort().slice(0, limit)
        const wanted = new Set(addresses)
        return all
          .filter((r) => wanted.has(r.address))
          .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
      }),
    storeModel: (model) =>
      Effect.sync(() => {
        const stored = { version: models.length + 1, ...model }
        models.push(stored)
        generation++
        return stored
      }),
    models: Effect.sync(() => [...models]),
    generation: Effect.sync(() => generation),
    lists: Effect.sync(() =>
      [...byList.keys()]
        .sort()
        .map((list) => {
          const current = currentOf(list)!
          const records = byList.get(list) ?? []
          const active = records.filter((r) => r.delistedAt === undefined).length
          const info = current.info
          return {
            list,
            source: info.source,
            kind: info.kind,
            authority: inEffect(list).at(-1)!.info.authority,
            version: current.number,
            asOf: info.asOf,
            since: IntelIndex.inDateOrder(inEffect(list))[0]!.info.asOf,
            versions: [...new Set(IntelIndex.inDateOrder(inEffect(list)).map((v) => v.info.asOf))],
            contentHash: info.contentHash,
            origin: info.origin,
            ingestedAt: info.ingestedAt,
            active,
            delisted: records.length - active
          }
        })
        .map((status) => IntelIndex.withRefusal(status, refusals.get(status.list)))
    ),
    recordRefusal: (list, refusal) => Effect.sync(() => void refusals.set(list, refusal))
  }
  return index
})

/** A layer with a fresh, empty in-memory IntelIndex. */
export const layer: Layer.Layer<IntelIndex.IntelIndex | IntelIndex.Versions | IntelIndex.Administration> =
  IntelIndex.layerOf(make)
