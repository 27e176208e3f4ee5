/** The key's contracts: registered with their ABI, deleted. */
import { useState } from "preact/hooks"
import { clientFor, errorMessage, type Contract } from "../client"
import { useKeyChain, useRead } from "../fetching"
import { Results } from "../ui"

export const Contracts = ({ keyValue }: { readonly keyValue: string }) => {
  const keyChain = useKeyChain(keyValue)
  return keyChain === undefined ? (
    <p>Loading the contracts…</p>
  ) : (
    <ContractsOn keyValue={keyValue} initialChain={keyChain} />
  )
}

const ContractsOn = ({ keyValue, initialChain }: { readonly keyValue: string; readonly initialChain: string }) => {
  const [chainId, setChainId] = useState(initialChain)
  const [inUse, setInUse] = useState<{ readonly contract: Contract; readonly bots: string } | undefined>()
  const [address, setAddress] = useState("")
  const [label, setLabel] = useState("")
  const [abi, setAbi] = useState("")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const listed = useRead(() => clientFor(keyValue).contracts(Number(chainId)), [keyValue, chainId])
  const contracts: ReadonlyArray<Contract> = listed.value?.contracts ?? []
  const register = async (event: Event) => {
    event.preventDefault()
    setOutcome(undefined)
    const answer = await clientFor(keyValue).registerContract({
      chainId: Number(chainId),
      contractAddress: address.trim(),
      label: label.trim(),
      abi
    })
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    const c = answer.data.contract
    setOutcome({
      ok: true,
      text: `Registered ${c.label} (ABI ${c.abiSource}${c.proxy === undefined ? "" : `, a proxy of ${c.proxy.implementation}`}).`
    })
    listed.reload()
  }
  /** Deletes a contract; one that bots use is deleted only when confirmed, as the API asks (409, then ?force). */
  const remove = async (c: Contract, force: boolean) => {
    const answer = await clientFor(keyValue).deleteContract(c.id, force)
    if (answer.response.status === 409 && !force) {
      const details = (answer.error as { details?: { bots?: ReadonlyArray<{ botName: string }> } } | undefined)?.details
      setInUse({ contract: c, bots: (details?.bots ?? []).map((b) => b.botName).join(", ") })
      return
    }
    setInUse(undefined)
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    setOutcome({ ok: true, text: `Deleted ${c.label}.` })
    listed.reload()
  }
  return (
    <section aria-label="Contracts">
      <form class="screen" onSubmit={register}>
        <label for="contract-chain">Chain id</label>
        <input
          id="contract-chain"
          inputMode="numeric"
          value={chainId}
          onInput={(e) => setChainId(e.currentTarget.value)}
        />
        <label for="contract-address">Contract address</label>
        <input
          id="contract-address"
          spellcheck={false}
          required
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
        <label for="contract-label">Label (the name rules use)</label>
        <input id="contract-label" required value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        <label for="contract-abi">ABI (JSON; empty: fetched from Sourcify or an explorer)</label>
        <textarea
          id="contract-abi"
          rows={4}
          spellcheck={false}
          value={abi}
          onInput={(e) => setAbi(e.currentTarget.value)}
        />
        <button type="submit">Register</button>
      </form>
      {outcome === undefined ? null : (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "ok" : "problem"} data-testid="contract-outcome">
          {outcome.text}
        </p>
      )}
      <Results
        label="Registered contracts"
        testId="contracts"
        head={
          <>
            <th scope="col">Label</th>
            <th scope="col">Address</th>
            <th scope="col">ABI</th>
            <th scope="col">Proxy of</th>
            <th scope="col">Delete</th>
          </>
        }
      >
        {contracts.map((c) => (
          <tr key={c.id}>
            <td>{c.label}</td>
            <td class="mono">{c.contractAddress}</td>
            <td>
              {c.abiSource}, {c.ABI.length} entries{c.decimals === undefined ? "" : `, ${c.decimals} decimals`}
            </td>
            <td class="mono">{c.proxy?.implementation ?? ""}</td>
            <td>
              <button onClick={() => void remove(c, false)} aria-label={`Delete ${c.label}`}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Results>
      {inUse === undefined ? null : (
        <div role="alertdialog" aria-label="Delete a contract in use" class="confirm" data-testid="confirm-delete">
          <p>
            {inUse.contract.label} is used by {inUse.bots || "bots of this key"}: their rules would no longer check
            without it, and they would stop alerting. Delete it anyway?
          </p>
          <button onClick={() => void remove(inUse.contract, true)}>Delete anyway</button>{" "}
          <button onClick={() => setInUse(undefined)}>Keep it</button>
        </div>
      )}
      {contracts.length === 0 ? (
        <p class="note" data-testid="contracts-empty">
          No contract of this key on chain {chainId}. Register one above (its ABI pasted, or fetched when the contract
          is verified), or change the chain id.
        </p>
      ) : null}
    </section>
  )
}
