/** The rule editor: a watch rule checked as it is typed, saved as a bot. */
import { useEffect, useState } from "preact/hooks"
import { clientFor, errorMessage, type Bot, type Channel, type RuleCheck } from "../client"
import { useKeyChain } from "../fetching"

/** One problem drawn under its expression: the source, a caret at the offset, the message and what was meant. */
const Caret = ({ source, problem }: { readonly source: string; readonly problem: RuleCheck["problems"][number] }) => (
  <pre class="caret" data-testid="problem">
    {`${source}\n${" ".repeat(problem.offset)}^ ${problem.message}${
      problem.candidates.length === 0 ? "" : ` (did you mean ${problem.candidates.join(", ")}?)`
    }`}
  </pre>
)

type Severity = "Critical" | "High" | "Medium" | "Low"

/**
 * Creates a bot with a rule that checks (its name, severity and channels; watching from now), or saves the rule and
 * fields of the bot being edited (a new rule watches from now too).
 */
const SaveBot = ({
  keyValue,
  chainId,
  expressions,
  bot
}: {
  readonly keyValue: string
  readonly chainId: number
  readonly expressions: ReadonlyArray<string>
  readonly bot: Bot | undefined
}) => {
  const [name, setName] = useState(bot?.botName ?? "")
  const [severity, setSeverity] = useState<Severity>(bot?.severity ?? "High")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const [channels, setChannels] = useState<ReadonlyArray<Channel>>([])
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(bot?.notifications ?? []))
  useEffect(() => {
    void clientFor(keyValue)
      .channels()
      .then((answer) => setChannels(answer.data?.channels ?? []))
  }, [keyValue])
  const save = async (event: Event) => {
    event.preventDefault()
    const fields = { botName: name.trim(), severity, expressions, notifications: [...chosen] }
    const answer =
      bot === undefined
        ? await clientFor(keyValue).createBot({ ...fields, chainId, active: true })
        : await clientFor(keyValue).updateBot(bot.id, fields)
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    const saved = answer.data.bot
    const from = saved.watchingFrom === undefined ? "" : `, watching from block ${saved.watchingFrom.blockNumber}`
    setOutcome({
      ok: true,
      text:
        bot === undefined
          ? `Created ${saved.botName} (${saved.id})${from}.`
          : `Saved ${saved.botName} (${saved.id}), revision ${saved.revision}${from}.`
    })
  }
  return (
    <form class="save-bot" onSubmit={save}>
      <label for="bot-name">Bot name</label>
      <input id="bot-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="severity">Severity</label>
      <select id="severity" value={severity} onChange={(e) => setSeverity(e.currentTarget.value as Severity)}>
        {["Critical", "High", "Medium", "Low"].map((s) => (
          <option value={s}>{s}</option>
        ))}
      </select>
      {channels.length === 0 ? null : (
        <fieldset>
          <legend>Notify</legend>
          {channels.map((c) => (
            <label class="inline">
              <input
                type="checkbox"
                checked={chosen.has(c.id)}
                onChange={(e) => {
                  const next = new Set(chosen)
                  if (e.currentTarget.checked) next.add(c.id)
                  else next.delete(c.id)
                  setChosen(next)
                }}
              />{" "}
              {c.name} ({c.type})
            </label>
          ))}
        </fieldset>
      )}
      <button type="submit">{bot === undefined ? "Create bot" : "Save changes"}</button>
      {outcome === undefined ? null : (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "ok" : "problem"} data-testid="bot-created">
          {outcome.text}
        </p>
      )}
    </form>
  )
}

/** The rule editor: a new bot's rule, or the rule of `editing` (its chain fixed), checked as it is typed. */
export const RulesView = ({
  keyValue,
  editing,
  onNew
}: {
  readonly keyValue: string
  readonly editing: Bot | undefined
  readonly onNew: () => void
}) => {
  const keyChain = useKeyChain(keyValue)
  const [chosen, setChainId] = useState<string | undefined>(editing === undefined ? undefined : String(editing.chainId))
  // A new rule opens on the chain the key uses (its contracts', else its bots'), once that is known.
  const chainId = chosen ?? keyChain ?? ""
  const [text, setText] = useState(editing?.watchRule.expressions.join("\n") ?? "")
  const [labels, setLabels] = useState<ReadonlyArray<string>>([])
  const [found, setFound] = useState<RuleCheck | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const chain = Number(chainId)
  useEffect(() => {
    if (!Number.isInteger(chain) || chain < 1) return
    // Only the answer for the chain shown now counts: an earlier one arriving late is dropped.
    let current = true
    void clientFor(keyValue)
      .contracts(chain)
      .then((answer) => {
        if (current) setLabels(answer.data?.contracts.map((c) => c.label) ?? [])
      })
    return () => {
      current = false
    }
  }, [keyValue, chain])
  // Checked as you type: each change waits a moment, and only the latest answer is shown.
  useEffect(() => {
    const expressions = text.split("\n").filter((l) => l.trim() !== "")
    if (expressions.length === 0 || !Number.isInteger(chain) || chain < 1) return setFound(undefined)
    let current = true
    const timer = setTimeout(() => {
      void clientFor(keyValue)
        .checkRule(chain, expressions, editing)
        .then((answer) => {
          if (!current) return
          if (answer.data === undefined) {
            setFound(undefined)
            setProblem(errorMessage(answer.error, answer.response.status))
          } else {
            setProblem(undefined)
            setFound(answer.data)
          }
        })
    }, 300)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [keyValue, chain, text, editing])
  const expressions = text.split("\n").filter((l) => l.trim() !== "")
  return (
    <section aria-label="Watch rules">
      {editing === undefined ? null : (
        <p class="note" data-testid="editing">
          Editing {editing.botName} ({editing.id}), revision {editing.revision}.{" "}
          <button onClick={onNew}>New bot instead</button>
        </p>
      )}
      <label for="rule-chain">Chain id</label>
      <input
        id="rule-chain"
        inputMode="numeric"
        value={chainId}
        readOnly={editing !== undefined}
        onInput={(e) => setChainId(e.currentTarget.value)}
      />
      <p class="note">
        Contracts of this key on the chain:{" "}
        {labels.length === 0
          ? "none yet. Rules name contracts by their label: register one under Contracts first (its ABI pasted, or fetched when it is verified)."
          : labels.join(", ")}
      </p>
      <label for="rule">Rule: one expression per line, AND-ed as a bot takes them</label>
      <textarea id="rule" rows={4} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      {problem === undefined ? null : (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      {found === undefined ? null : found.ok ? (
        <>
          <p class="ok" data-testid="rule-ok">
            Checks. Normal form: <code>{found.normal}</code>
          </p>
          <SaveBot keyValue={keyValue} chainId={chain} expressions={expressions} bot={editing} />
        </>
      ) : (
        <div role="status" data-testid="rule-problems">
          <p class="problem">{found.message}</p>
          {found.problems.map((p) => (
            <Caret source={expressions[p.expression] ?? ""} problem={p} />
          ))}
        </div>
      )}
    </section>
  )
}
