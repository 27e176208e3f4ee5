/**
 * Notification channels on the real server (SQLite, ephemeral port): created, listed, read, refused and deleted
 * over HTTP, and their test messages delivered through the durable outbox to local receivers standing in for each
 * service: a real HTTPS receiver for signed webhooks, Slack, Discord and the Telegram Bot API, and a real SMTP
 * server (smtp-server) for email. Every answer is also checked against the served OpenAPI document.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { WebhookDispatcher, WebhookSigning } from "@vigil/core"
import { Effect, Schedule } from "effect"
import { MailRelay } from "@vigil/testkit"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { compileWebhooks } from "./OpenApiConformance.ts"
import * as TestServer from "./TestServer.ts"

const { call, issue } = TestServer

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

const fast = { timeoutMillis: 2_000, retries: 1, backoffMillis: 20, pollMillis: 20 }

/** The server trusting the test CA with 127.0.0.1 allowed, Telegram's API at the receiver, mail through `smtp`. */
const serving = <A, E, R>(
  body: (r: Receiver.Receiver, mail: MailRelay.MailRelay) => Effect.Effect<A, E, R>,
  behaviour?: Receiver.Behaviour
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => Promise.all([Receiver.start(certs, behaviour), MailRelay.start()])),
    ([r, mail]) =>
      body(r, mail).pipe(
        Effect.provide(
          TestServer.layer({
            webhooks: { allowHosts: ["127.0.0.1"], delivery: { ...fast, telegramApiUrl: r.url("/telegram") } },
            outbound: {
              allowHosts: ["127.0.0.1"],
              ca: certs.ca,
              smtp: { url: mail.url, from: "Vigil <alerts@vigil.test>" }
            }
          }) as never
        )
      ) as Effect.Effect<A, E, never>,
    ([r, mail]) => Effect.promise(() => Promise.all([r.close(), mail.close()]))
  )

/** Reads `read` until `done` holds: a wait for a state, never for a length of time (gives up after 300 reads). */
const until = <A, R>(read: Effect.Effect<A, never, R>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.flatMap((a) => (done(a) ? Effect.succeed(a) : Effect.fail("not yet" as const))),
    Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 300 }),
    Effect.orDie
  )

const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"

describe("/v1/notifications", () => {
  it.live(
    "creates every type, shows no secret after creation, keeps keys apart and refuses what is wrong, naming the field",
    () =>
      serving((r) =>
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const headers = { "x-api-key": key }
          const create = (json: unknown) => call("POST", "/v1/notifications", { headers, json })
          const webhook = yield* create({ type: "webhook", name: "ops hook", url: r.url("/hook") })
          assert.strictEqual(webhook.status, 201, webhook.text)
          assert.match(webhook.json.channel.id, /^nc_\d{13}_[a-z0-9]{9}$/)
          assert.match(webhook.json.secret, /^whsec_/)
          assert.strictEqual(webhook.json.channel.url, r.url("/hook"))
          const slack = yield* create({ type: "slack", name: "#alerts", url: r.url("/services/T0/B0/XXXX") })
          assert.strictEqual(slack.status, 201, slack.text)
          assert.strictEqual(slack.json.channel.url, `https://127.0.0.1:${r.port}/…`, "the path is the credential")
          assert.notProperty(slack.json, "secret")
          const telegram = yield* create({ type: "telegram", name: "tg", botToken: token, chatId: -1001234567890 })
          assert.strictEqual(telegram.status, 201, telegram.text)
          assert.strictEqual(telegram.json.channel.chatId, "-1001234567890")
          assert.notInclude(telegram.text, token)
          const email = yield* create({ type: "email", name: "mail", to: ["ops@example.com"] })
          assert.strictEqual(email.status, 201, email.text)

          const list = yield* call("GET", "/v1/notifications", { headers })
          assert.deepStrictEqual(
            list.json.channels.map((c: any) => [c.type, c.name, c.deliveries.delivered]),
            [
              ["webhook", "ops hook", 0],
              ["slack", "#alerts", 0],
              ["telegram", "tg", 0],
              ["email", "mail", 0]
            ]
          )
          assert.notInclude(list.text, "whsec_")
          assert.notInclude(list.text, token)
          const other = yield* issue({ name: "Other" })
          const id = webhook.json.channel.id
          assert.strictEqual(
            (yield* call("GET", `/v1/notifications/${id}`, { headers: { "x-api-key": other } })).status,
            404
          )
          assert.strictEqual(
            (yield* call("DELETE", `/v1/notifications/${id}`, { headers: { "x-api-key": other } })).status,
            404
          )
          assert.deepStrictEqual(
            (yield* call("GET", "/v1/notifications", { headers: { "x-api-key": other } })).json.channels,
            []
          )
          assert.strictEqual(
            (yield* call("GET", "/api/v2/webhooks", { headers })).json.count,
            0,
            "channels are not intelligence webhooks"
          )

          const refused = [
            [{ type: "pager", name: "x" }, "type"],
            [{ type: "slack", name: "", url: r.url("/x") }, "name"],
            // A right-to-left override, a zero-width space: names that read as another in a message.
            [{ type: "slack", name: "alerts\u202Ekcals", url: r.url("/x") }, "name"],
            [{ type: "slack", name: "ops\u200Bteam", url: r.url("/x") }, "name"],
            [{ type: "slack", name: "x" }, "url"],
            [{ type: "discord", name: "x", url: "http://127.0.0.1/x" }, "url"],
            [{ type: "webhook", name: "x", url: "https://10.1.2.3/x" }, "url"],
            [{ type: "telegram", name: "x", botToken: "nope", chatId: 1 }, "botToken"],
            [{ type: "telegram", name: "x", botToken: token, chatId: "a b" }, "chatId"],
            [{ type: "email", name: "x", to: ["not an address"] }, "to"],
            [{ type: "slack", name: "x", url: r.url("/x"), template: "{{bot}} {{wallet}}" }, "template"]
          ] as const
          for (const [json, field] of refused) {
            const answer = yield* create(json)
            assert.strictEqual(answer.status, 400, `${JSON.stringify(json)} → ${answer.text}`)
            assert.include(answer.json.message, field, answer.text)
          }
          const privateHost = yield* create({ type: "webhook", name: "x", url: "https://10.1.2.3/x" })
          assert.include(privateHost.json.message, "private")
          assert.strictEqual((yield* call("GET", "/v1/notifications", { headers })).json.channels.length, 4)

          assert.strictEqual((yield* call("DELETE", `/v1/notifications/${id}`, { headers })).status, 200)
          assert.strictEqual((yield* call("GET", `/v1/notifications/${id}`, { headers })).status, 404)
        })
      ),
    30_000
  )

  it.live(
    "test messages reach each service in its own format: signed webhook, Slack, Discord, Telegram, email",
    () =>
      serving((r, mail) =>
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const headers = { "x-api-key": key }
          const make = (json: unknown) =>
            Effect.map(call("POST", "/v1/notifications", { headers, json }), (a) => {
              assert.strictEqual(a.status, 201, a.text)
              return a.json as { channel: { id: string }; secret?: string }
            })
          const hook = yield* make({ type: "webhook", name: "hook", url: r.url("/hook") })
          const slack = yield* make({
            type: "slack",
            name: "slack",
            url: r.url("/slack"),
            template: "{{title}} <{{kind}}> & {{alertId}}"
          })
          const discord = yield* make({ type: "discord", name: "discord", url: r.url("/discord") })
          const telegram = yield* make({ type: "telegram", name: "tg", botToken: token, chatId: "@vigil_alerts" })
          const email = yield* make({ type: "email", name: "mail", to: ["ops@example.com", "sec@example.com"] })

          const sent: Record<string, string> = {}
          for (const [name, c] of Object.entries({ hook, slack, discord, telegram, email })) {
            const answer = yield* call("POST", `/v1/notifications/${c.channel.id}/test`, { headers })
            assert.strictEqual(answer.status, 202, answer.text)
            sent[name] = answer.json.deliveryId
          }
          yield* Effect.promise(() => r.until((got) => got.length >= 4))
          yield* Effect.promise(() => mail.until((mails) => mails.length >= 1))
          const at = (path: string) => r.received.find((x) => x.path === path)!

          const signed = at("/hook")
          assert.deepStrictEqual(
            compileWebhooks((yield* call("GET", "/openapi.json")).json)("channelMessage", signed.headers, signed.body),
            [],
            "as /openapi.json's webhooks say"
          )
          const body = JSON.parse(signed.body)
          assert.strictEqual(body.type, "test")
          assert.strictEqual(body.webhook_id, hook.channel.id)
          assert.strictEqual(signed.headers["webhook-id"], sent.hook)
          assert.isTrue(
            WebhookSigning.verify(
              hook.secret!,
              {
                id: String(signed.headers["webhook-id"]),
                timestamp: String(signed.headers["webhook-timestamp"]),
                signature: String(signed.headers["webhook-signature"])
              },
              signed.body,
              Math.floor(Date.now() / 1000)
            ),
            "signed with the channel's secret"
          )
          assert.include(body.data.text, "Test message from Vigil")

          const slackBody = JSON.parse(at("/slack").body)
          assert.match(slackBody.text, /^Test message from Vigil: this channel works &lt;test&gt; &amp; test_\d+_/)
          const discordBody = JSON.parse(at("/discord").body)
          assert.include(discordBody.content, "Test message from Vigil")
          assert.deepStrictEqual(discordBody.allowed_mentions, { parse: [] })
          const tg = at(`/telegram/bot${token}/sendMessage`)
          assert.isDefined(tg, JSON.stringify(r.received.map((x) => x.path)))
          const tgBody = JSON.parse(tg.body)
          assert.strictEqual(tgBody.chat_id, "@vigil_alerts")
          assert.include(tgBody.text, "Test message from Vigil")

          const [message] = mail.mails
          assert.strictEqual(message!.from, "alerts@vigil.test")
          assert.deepStrictEqual(message!.to, ["ops@example.com", "sec@example.com"])
          assert.include(message!.raw, "Subject: Test message from Vigil: this channel works")
          assert.include(message!.raw, `Message-ID: <${sent.email}@vigil>`)

          const states = yield* until(
            Effect.map(call("GET", "/v1/notifications", { headers }), (a) => a.json.channels as Array<any>),
            (cs) => cs.every((c) => c.deliveries.delivered === 1)
          )
          assert.deepStrictEqual(
            states.map((c) => [c.deliveries.pending, c.deliveries.failed]),
            [
              [0, 0],
              [0, 0],
              [0, 0],
              [0, 0],
              [0, 0]
            ]
          )
        })
      ),
    30_000
  )

  it.live(
    "a receiver that keeps failing: retried, then dead-lettered, and the channel says why; redelivered once it is back",
    () =>
      serving(
        (r) =>
          Effect.gen(function* () {
            const key = yield* issue({ name: "Acme" })
            const headers = { "x-api-key": key }
            const created = yield* call("POST", "/v1/notifications", {
              headers,
              json: { type: "discord", name: "down", url: r.url("/down") }
            })
            const id = created.json.channel.id
            assert.strictEqual((yield* call("POST", `/v1/notifications/${id}/test`, { headers })).status, 202)
            const channel = yield* until(
              Effect.map(call("GET", `/v1/notifications/${id}`, { headers }), (a) => a.json.channel),
              (c) => c.deliveries.failed === 1
            )
            assert.strictEqual(r.received.length, 2, "the first attempt and one retry")
            assert.deepStrictEqual([channel.deliveries.delivered, channel.deliveries.pending], [0, 0])
            assert.match(channel.deliveries.lastError, /^HTTP 503 \(after 2 attempts\)$/)
            // /metrics: the attempts by kind and outcome, how long they took, and the dead letter waiting.
            const metrics = (yield* call("GET", "/metrics")).text
            assert.include(metrics, 'vigil_delivery_attempts_total{type="discord",outcome="retried"} 1')
            assert.include(metrics, 'vigil_delivery_attempts_total{type="discord",outcome="dead"} 1')
            assert.include(metrics, 'vigil_deliveries_dead{type="discord"} 1')
            assert.include(metrics, 'vigil_deliveries_pending{type="discord"} 0')
            assert.match(metrics, /vigil_delivery_attempt_seconds_count\{type="discord"\} 2/)
            assert.strictEqual((yield* call("POST", "/v1/notifications/nc_0_missing/test", { headers })).status, 404)

            // The receiver is back (it answers 503 to its first two requests only): the dead letter is sent again.
            const again = yield* call("POST", `/v1/notifications/${id}/redeliver`, { headers })
            assert.strictEqual(again.status, 202, again.text)
            assert.deepStrictEqual(
              [again.json.channelId, again.json.requeued, again.json.message],
              [id, 1, "1 message(s) queued again"]
            )
            const healed = yield* until(
              Effect.map(call("GET", `/v1/notifications/${id}`, { headers }), (a) => a.json.channel),
              (c) => c.deliveries.delivered === 1
            )
            assert.deepStrictEqual([healed.deliveries.failed, healed.deliveries.pending], [0, 0])
            assert.notProperty(healed.deliveries, "lastError", "the channel recovered: its old error is not shown")
            // Every kind has its series, 0 where nothing waits (an absent series is not 0 in an alert rule).
            const after = (yield* call("GET", "/metrics")).text
            for (const type of ["intelligence", "webhook", "slack", "discord", "telegram", "email"]) {
              assert.include(after, `vigil_deliveries_pending{type="${type}"} 0`)
              assert.include(after, `vigil_deliveries_dead{type="${type}"} 0`)
            }
            assert.strictEqual(r.received.length, 3)
            assert.strictEqual(r.received[2]!.body, r.received[0]!.body, "the same message")
            const none = yield* call("POST", `/v1/notifications/${id}/redeliver`, { headers })
            assert.deepStrictEqual([none.status, none.json.requeued], [202, 0])
            const other = yield* issue({ name: "Other" })
            assert.strictEqual(
              (yield* call("POST", `/v1/notifications/${id}/redeliver`, { headers: { "x-api-key": other } })).status,
              404,
              "another key's channel"
            )
          }),
        (n) => (n < 2 ? 503 : 200)
      ),
    30_000
  )

  it.live(
    "a receiver that answers 410 Gone disables its channel: no test message, no redelivery",
    () =>
      serving(
        (r) =>
          Effect.gen(function* () {
            const headers = { "x-api-key": yield* issue({ name: "Acme" }) }
            const created = yield* call("POST", "/v1/notifications", {
              headers,
              json: { type: "slack", name: "gone", url: r.url("/gone") }
            })
            const id = created.json.channel.id
            assert.strictEqual((yield* call("POST", `/v1/notifications/${id}/test`, { headers })).status, 202)
            const channel = yield* until(
              Effect.map(call("GET", `/v1/notifications/${id}`, { headers }), (a) => a.json.channel),
              (c) => c.disabled === true
            )
            assert.strictEqual(channel.deliveries.failed, 1)
            for (const action of ["test", "redeliver"]) {
              const refused = yield* call("POST", `/v1/notifications/${id}/${action}`, { headers })
              assert.strictEqual(refused.status, 400, action)
              assert.match(
                refused.json.message,
                /disabled since .* \(its receiver answered 410 Gone\); nothing is sent to it/
              )
            }
            assert.strictEqual(r.received.length, 1)
          }),
        () => 410
      ),
    30_000
  )

  it.live(
    "bots name channels of their own key; a channel a bot sends to is not deleted from under it",
    () =>
      serving((r) =>
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const other = yield* issue({ name: "Other" })
          const headers = { "x-api-key": key }
          const channel = (k: string) =>
            Effect.map(
              call("POST", "/v1/notifications", {
                headers: { "x-api-key": k },
                json: { type: "slack", name: "s", url: r.url("/s") }
              }),
              (a) => a.json.channel.id as string
            )
          const mine = yield* channel(key)
          const theirs = yield* channel(other)
          const abi = [{ type: "event", name: "Ping", inputs: [], anonymous: false }]
          const contract = yield* call("POST", "/v1/contracts", {
            headers,
            json: {
              chainId: 1,
              contractAddress: "0x00000000000000000000000000000000000000b1",
              label: "Pinger",
              ABI: abi
            }
          })
          assert.strictEqual(contract.status, 201, contract.text)
          const bot = (notifications: ReadonlyArray<string>) => ({
            botName: "pings",
            chainId: 1,
            watchRule: { expressions: ["system.emitted(tx1.Pinger.E.Ping)"] },
            notifications
          })
          const foreign = yield* call("POST", "/v1/bots", { headers, json: bot([mine, theirs]) })
          assert.strictEqual(foreign.status, 400, foreign.text)
          assert.include(foreign.json.message, `notifications: ${theirs} is not a notification channel of this key`)
          const created = yield* call("POST", "/v1/bots", { headers, json: bot([mine, mine]) })
          assert.strictEqual(created.status, 201, created.text)
          assert.deepStrictEqual(created.json.bot.notifications, [mine])
          const botId = created.json.bot.id

          const inUse = yield* call("DELETE", `/v1/notifications/${mine}`, { headers })
          assert.strictEqual(inUse.status, 409, inUse.text)
          assert.deepStrictEqual(inUse.json.details.bots, [{ id: botId, botName: "pings" }])
          const update = yield* call("PUT", `/v1/bots/${botId}`, { headers, json: { notifications: [theirs] } })
          assert.strictEqual(update.status, 400, "an update is checked too")
          assert.strictEqual(
            (yield* call("PUT", `/v1/bots/${botId}`, { headers, json: { notifications: [] } })).status,
            200
          )
          assert.strictEqual((yield* call("DELETE", `/v1/notifications/${mine}`, { headers })).status, 200)
        })
      ),
    30_000
  )
})

describe("fair delivery", () => {
  it.live(
    "a stalled channel holds neither its key's other channel nor another key's: each gets its messages while it hangs",
    () =>
      serving(
        (r) =>
          Effect.gen(function* () {
            const channel = (headers: Record<string, string>, name: string) =>
              Effect.map(
                call("POST", "/v1/notifications", {
                  headers,
                  json: { type: "discord", name, url: r.url(`/${name}`) }
                }),
                (a) => a.json.channel.id as string
              )
            const a = { "x-api-key": yield* issue({ name: "A" }) }
            const b = { "x-api-key": yield* issue({ name: "B" }) }
            const stalled = yield* channel(a, "stalled")
            const aLive = yield* channel(a, "a-live")
            const bLive = yield* channel(b, "b-live")
            // Twenty messages queued for the stalled channel first, then five for each live one.
            for (let i = 0; i < 20; i++) yield* call("POST", `/v1/notifications/${stalled}/test`, { headers: a })
            for (let i = 0; i < 5; i++) {
              yield* call("POST", `/v1/notifications/${aLive}/test`, { headers: a })
              yield* call("POST", `/v1/notifications/${bLive}/test`, { headers: b })
            }
            const got = (path: string) => r.received.filter((m) => m.path === path).length
            yield* Effect.promise(() => r.until(() => got("/a-live") === 5 && got("/b-live") === 5))
            // Every live message arrived while the stalled channel's first attempts still hang (2 s timeout):
            // it holds at most its own share of slots (8 by default), never its key's (32).
            assert.isAtMost(got("/stalled"), WebhookDispatcher.defaultSettings.perDestination)
            assert.isTrue(
              r.received.filter((m) => m.path === "/stalled").every((m) => m.status === 0),
              "none of the stalled channel's requests was answered yet"
            )
          }),
        (_, path) => (path === "/stalled" ? "hang" : 200)
      ),
    30_000
  )
})
