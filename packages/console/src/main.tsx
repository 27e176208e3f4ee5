/** The Vigil console: sign in with an API key, screen addresses, follow bots; one view per file under views/. */
import { render } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Bot, signOut, storedKey } from "./client"
import { Monitoring } from "./views/Alerts"
import { Batch } from "./views/Batch"
import { Channels } from "./views/Channels"
import { Contracts } from "./views/Contracts"
import { Lists } from "./views/Lists"
import { RulesView } from "./views/Rules"
import { Screen } from "./views/Screening"
import { SignIn } from "./views/SignIn"
import { Usage } from "./views/Usage"
import "./style.css"

const App = () => {
  const [key, setKey] = useState(storedKey())
  const [editing, setEditing] = useState<Bot | undefined>()
  const [view, setView] = useState<
    "screen" | "batch" | "lists" | "contracts" | "channels" | "rules" | "monitoring" | "usage"
  >("screen")
  const heading = useRef<HTMLHeadingElement>(null)
  // After sign-in, focus goes to the page's heading, so a screen reader starts from the top of what is new.
  useEffect(() => {
    if (key !== undefined) heading.current?.focus()
  }, [key])
  if (key === undefined) return <SignIn onKey={setKey} />
  return (
    <>
      <h1 class="visually-hidden" tabIndex={-1} ref={heading}>
        Vigil console
      </h1>
      <nav aria-label="Console">
        <strong>Vigil</strong>
        <button aria-pressed={view === "screen"} onClick={() => setView("screen")}>
          Screening
        </button>
        <button aria-pressed={view === "batch"} onClick={() => setView("batch")}>
          Batch
        </button>
        <button aria-pressed={view === "lists"} onClick={() => setView("lists")}>
          Lists
        </button>
        <button aria-pressed={view === "contracts"} onClick={() => setView("contracts")}>
          Contracts
        </button>
        <button aria-pressed={view === "channels"} onClick={() => setView("channels")}>
          Channels
        </button>
        <button
          aria-pressed={view === "rules"}
          onClick={() => {
            setEditing(undefined)
            setView("rules")
          }}
        >
          Rules
        </button>
        <button aria-pressed={view === "monitoring"} onClick={() => setView("monitoring")}>
          Alerts
        </button>
        <button aria-pressed={view === "usage"} onClick={() => setView("usage")}>
          Usage
        </button>
        <button
          class="sign-out"
          onClick={() => {
            signOut()
            setKey(undefined)
          }}
        >
          Sign out
        </button>
      </nav>
      <main>
        {view === "screen" ? (
          <Screen keyValue={key} />
        ) : view === "batch" ? (
          <Batch keyValue={key} />
        ) : view === "lists" ? (
          <Lists keyValue={key} />
        ) : view === "contracts" ? (
          <Contracts keyValue={key} />
        ) : view === "channels" ? (
          <Channels keyValue={key} />
        ) : view === "rules" ? (
          <RulesView key={editing?.id ?? "new"} keyValue={key} editing={editing} onNew={() => setEditing(undefined)} />
        ) : view === "monitoring" ? (
          <Monitoring
            keyValue={key}
            onEdit={(bot) => {
              setEditing(bot)
              setView("rules")
            }}
          />
        ) : (
          <Usage keyValue={key} />
        )}
      </main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
