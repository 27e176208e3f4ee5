/** Signing in with an API key. */
import { useState } from "preact/hooks"
import { clientFor, signIn } from "../client"

export const SignIn = ({ onKey }: { readonly onKey: (key: string) => void }) => {
  const [key, setKey] = useState("")
  const [problem, setProblem] = useState<string | undefined>()
  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = key.trim()
    const answer = await clientFor(trimmed).status()
    if (answer.data?.status !== "authenticated") {
      setProblem(`This key is ${answer.data?.status ?? "not accepted"}.`)
      return
    }
    signIn(trimmed)
    onKey(trimmed)
  }
  return (
    <main class="narrow">
      <h1>Vigil console</h1>
      <form onSubmit={submit} aria-describedby="sign-in-note">
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          required
          autofocus
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
        <p id="sign-in-note" class="note">
          The key stays in this tab only (sessionStorage); every request goes through the public API with it.
        </p>
        {problem === undefined ? null : (
          <p role="alert" class="problem">
            {problem}
          </p>
        )}
      </form>
    </main>
  )
}
