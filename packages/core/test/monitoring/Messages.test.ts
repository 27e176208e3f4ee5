/** Messages of notification channels: templates, each service's format and limits, and retractions. */
import { assert, describe, it } from "@effect/vitest"
import { Channel, Channels, Messages, type WebhookStore } from "@vigil/core"

const alert: Messages.Alert = {
  id: "al_1",
  kind: "alert",
  bot: { id: "bot_1", name: "whales <b>", severity: "High" },
  chainId: 1,
  blockNumber: 19_000_017,
  txHash: `0x${"ab".repeat(32)}`,
  rule: 0,
  expression: "system.uintCompare(tx1.USDC.E.Transfer.value, >, 1000000000000000000000000000)",
  evidence: {
    transactions: { tx1: { hash: `0x${"ab".repeat(32)}`, blockNumber: 19_000_017, txIndex: 42 } },
    frames: {},
    occurrences: {
      "tx1.USDC.E.Transfer": {
        contract: "USDC",
        name: "Transfer",
        signature: "Transfer(address,address,uint256)",
        args: {
          from: "0x00000000000000000000000000000000000000a1",
          to: "0x00000000000000000000000000000000000000b2",
          value: "1000000000000000000000000001"
        },
        logIndex: 3
      },
      "tx1.itx1.Router.F.swap": {
        contract: "Router",
        name: "swap",
        signature: "swap(uint256[])",
        args: { amounts: ["1", "2"] },
        frame: 1,
        reverted: true
      }
    },
    held: []
  }
}

const channel = (type: Channel.Type, extra: Partial<Channel.Settings> = {}): WebhookStore.Webhook => ({
  id: "nc_1",
  keyId: "k",
  url: "https://example.com/x",
  secret: "whsec_c2VjcmV0",
  created: "2026-11-24T00:00:00.000Z",
  deliveryCount: 0,
  channel: { type, name: "n", ...extra }
})

const render = (type: Channel.Type, extra: Partial<Channel.Settings> = {}, a = alert) =>
  JSON.parse(Channels.render(channel(type, extra), a, "2026-11-24T00:00:01.000Z"))

describe("Channel.settingsOf", () => {
  it("reads a channel's settings, the same ones each time it is asked; a channel of no known kind has none", () => {
    const telegram = channel("telegram", { chatId: "@alerts" })
    assert.deepStrictEqual(Channel.settingsOf(telegram), { type: "telegram", name: "n", chatId: "@alerts" })
    assert.strictEqual(Channel.settingsOf(telegram), Channel.settingsOf(telegram))
    const unknown = { ...telegram, channel: { type: "pager", name: "n" } }
    assert.strictEqual(Channel.settingsOf(unknown), undefined)
    assert.strictEqual(Channel.settingsOf(unknown), undefined, "asked again")
    const { channel: _, ...webhook } = telegram
    assert.strictEqual(Channel.settingsOf(webhook), undefined, "a webhook is no channel")
  })
})

describe("Messages", () => {
  it("the default message names the bot, severity, chain, rule, transaction and each decoded argument", () => {
    const text = Messages.text(Messages.defaultTemplate, alert)
    assert.strictEqual(
      text,
      [
        "[High] whales <b> matched on chain 1",
        `Rule 1: ${alert.expression}`,
        `Transaction ${alert.txHash} in block 19000017`,
        "USDC.E.Transfer(from=0x00000000000000000000000000000000000000a1, to=0x00000000000000000000000000000000000000b2, value=1000000000000000000000000001)",
        'Router.F.swap(amounts=["1","2"]) reverted',
        "Alert al_1"
      ].join("\n")
    )
  })

  it("a template takes placeholders (spaces allowed), and unknown ones are named", () => {
    assert.strictEqual(
      Messages.text("{{ severity }}/{{chain}}/{{block}}/{{botId}}/{{kind}}: {{transactions}}", alert),
      `High/1/19000017/bot_1/alert: tx1 ${alert.txHash} (block 19000017, index 42)`
    )
    assert.deepStrictEqual(Messages.unknownPlaceholders("{{bot}} {{wallet}} {{ amount }}"), ["wallet", "amount"])
    assert.deepStrictEqual(Messages.unknownPlaceholders(Messages.defaultTemplate), [])
  })

  it("each service gets its own body: Slack escaped, Discord without mentions, Telegram to its chat, email with a subject", () => {
    assert.match(render("slack").text, /^\[High\] whales &lt;b&gt; matched on chain 1\n/)
    const discord = render("discord")
    assert.include(discord.content, "whales <b>")
    assert.deepStrictEqual(discord.allowed_mentions, { parse: [] })
    const telegram = render("telegram", { chatId: "-100123" })
    assert.strictEqual(telegram.chat_id, "-100123")
    assert.deepStrictEqual(telegram.link_preview_options, { is_disabled: true })
    assert.notProperty(telegram, "disable_web_page_preview")
    const email = render("email", { to: ["a@example.com"] })
    assert.strictEqual(email.subject, "[High] whales <b> matched on chain 1")
    assert.include(email.text, "USDC.E.Transfer(")
    const hook = render("webhook")
    assert.deepStrictEqual(
      [hook.timestamp, hook.correlation_id, hook.webhook_id, hook.type, hook.data.txHash, hook.data.evidence],
      ["2026-11-24T00:00:01.000Z", "al_1", "nc_1", "alert", alert.txHash, alert.evidence]
    )
  })

  it("long messages are cut to what each service takes, marked with an ellipsis", () => {
    const long = { ...alert, expression: "x".repeat(10_000) }
    const discord = render("discord", {}, long).content as string
    assert.strictEqual(discord.length, 2_000)
    assert.isTrue(discord.endsWith("…"))
    assert.strictEqual((render("telegram", { chatId: "1" }, long).text as string).length, 4_096)
    // Slack's is escaped (the bot's name "<b>" becomes "&lt;b&gt;"), then cut to 3,000 characters as sent.
    const slack = render("slack", {}, long).text as string
    assert.strictEqual(slack.length, 3_000)
    assert.include(slack, "whales &lt;b&gt;")
    assert.include(render("email", { to: ["a@example.com"] }, long).text, "x".repeat(10_000), "email is not cut")
  })

  it("a cut falls between code points, and Slack's text is cut as escaped, never inside an entity", () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
    // Every position of the emoji relative to each service's limit: never half of it.
    for (let shift = 0; shift < 4; shift++) {
      const emoji = { ...alert, expression: `${"x".repeat(1_900 + shift)}${"🚨".repeat(2_000)}` }
      for (const [type, extra, field] of [
        ["discord", {}, "content"],
        ["telegram", { chatId: "1" }, "text"],
        ["slack", {}, "text"]
      ] as const) {
        const text = render(type, extra, emoji)[field] as string
        assert.notMatch(text, lone, `${type}, shift ${shift}`)
        assert.isTrue(text.endsWith("…"))
      }
      const subject = render(
        "email",
        { to: ["a@example.com"] },
        {
          ...alert,
          bot: { ...alert.bot, name: `${"b".repeat(150 + shift)}${"🚨".repeat(40)}` }
        }
      ).subject as string
      assert.notMatch(subject, lone)
      assert.isAtMost(subject.length, 200)
    }
    assert.strictEqual(Messages.cut("ab🚨", 3), "ab…")
    assert.strictEqual(Messages.cut("ab🚨c", 4), "ab…")
    assert.strictEqual(Messages.cut("a🚨bc", 4), "a🚨…")
    // A cut never splits an escaped entity: 3,000 characters of '&' would otherwise end in a partial '&am'.
    const amps = render("slack", {}, { ...alert, expression: "&".repeat(5_000) }).text as string
    assert.notMatch(amps, /&(?:a|am|amp)?…$/)
    assert.match(amps, /&amp;…$/)
    // And what is sent is 3,000 characters at most, however much escaping makes of it (it was 12,806).
    for (const filler of ["&", "<", ">", "&<>x"]) {
      const text = render("slack", {}, { ...alert, expression: filler.repeat(5_000) }).text as string
      assert.isAtMost(text.length, 3_000, filler)
      assert.isAbove(text.length, 2_994, filler)
    }
  })

  it("a retraction says which alert it takes back and why", () => {
    const text = Messages.text(Messages.defaultTemplate, { ...alert, kind: "retraction" })
    assert.match(text, /^\[High\] whales <b>: alert al_1 retracted, its block left chain 1\n/)
    assert.strictEqual(render("webhook", {}, { ...alert, kind: "retraction" }).type, "retraction")
  })
})
