/**
 * The one way the console's views read the API: an answer, or its refusal in words; asked again when the inputs
 * change, when told (`reload`), and every so often for a live view. An answer that arrives after the view moved on
 * is dropped.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { clientFor, errorMessage } from "./client"

/** An answer of the typed client: its data, or the error body and the response it came with. */
interface Answer<T> {
  readonly data?: T
  readonly error?: unknown
  readonly response: Response
}

/** What a view reads: the data once answered, the refusal in words, and a way to ask again. */
export interface Read<T> {
  readonly value: T | undefined
  readonly problem: string | undefined
  readonly reload: () => void
}

/**
 * Reads `load` when the view opens, whenever `inputs` change, on `reload()`, and every `pollMillis` when given (the
 * alerts feed); `load` gives undefined while there is nothing to read. New inputs clear what the old ones read; a
 * refusal keeps the last data shown and says why.
 */
export const useRead = <T>(
  load: () => Promise<Answer<T>> | undefined,
  inputs: ReadonlyArray<unknown>,
  pollMillis?: number
): Read<T> => {
  const [value, setValue] = useState<T | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [version, setVersion] = useState(0)
  const readVersion = useRef(version)
  useEffect(() => {
    if (readVersion.current === version) setValue(undefined)
    readVersion.current = version
    let live = true
    const read = () =>
      void load()?.then((answer) => {
        if (!live) return
        if (answer.data === undefined) setProblem(errorMessage(answer.error, answer.response.status))
        else {
          setProblem(undefined)
          setValue(answer.data)
        }
      })
    read()
    const timer = pollMillis === undefined ? undefined : setInterval(read, pollMillis)
    return () => {
      live = false
      if (timer !== undefined) clearInterval(timer)
    }
    // The inputs name what `load` reads.
  }, [...inputs, version])
  return { value, problem, reload: () => setVersion((v) => v + 1) }
}

/**
 * The chain a monitoring view opens on: the chain of the key's first contract, else of its first bot, else
 * Ethereum (1); undefined while it is being read.
 */
export const useKeyChain = (keyValue: string): string | undefined => {
  const contracts = useRead(() => clientFor(keyValue).contracts(), [keyValue])
  const bots = useRead(() => clientFor(keyValue).bots(), [keyValue])
  const answered = (r: Read<unknown>) => r.value !== undefined || r.problem !== undefined
  if (!answered(contracts) || !answered(bots)) return undefined
  return String(contracts.value?.contracts[0]?.chainId ?? bots.value?.bots[0]?.chainId ?? 1)
}
