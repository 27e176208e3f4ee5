import { describe, expect, it } from "@effect/vitest"
import { fc, test } from "@fast-check/vitest"
import {
  NetworkGuard,
  WebhookDispatcher,
  Webhooks,
  WebhookSigning,
  type WebhookStore,
  WebhookTransport
} from "@vigil/core"

describe("WebhookSigning", () => {
  it("matches the Standard Webhooks reference vector", () => {
    expect(
      WebhookSigning.sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}'
      )
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  test.prop([fc.string(), fc.string({ minLength: 1 }), fc.integer({ min: 1_600_000_000, max: 2_000_000_000 })])(
    "verifies what it signed, and nothing altered or stale",
    (body, id, ts) => {
      const secret = WebhookSigning.newSecret()
      const h = WebhookSigning.headers(secret, id, ts, body)
      const received = { id: h["webhook-id"], timestamp: h["webhook-timestamp"], signature: h["webhook-signature"] }
      expect(WebhookSigning.verify(secret, received, body, ts + 10)).toBe(true)
      expect(WebhookSigning.verify(secret, received, `${body} `, ts)).toBe(false)
      expect(WebhookSigning.verify(WebhookSigning.newSecret(), received, body, ts)).toBe(false)
      expect(WebhookSigning.verify(secret, received, body, ts + 301)).toBe(false)
    }
  )
})

describe("NetworkGuard", () => {
  it.each([
    ["127.0.0.1", /loopback/],
    ["10.1.2.3", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["169.254.169.254", /link-local/],
    ["100.64.0.1", /carrier-grade/],
    ["0.0.0.0", /unspecified/],
    ["224.0.0.1", /multicast/],
    ["255.255.255.255", /reserved/],
    ["::1", /loopback/],
    ["::", /unspecified/],
    ["::ffff:127.0.0.1", /IPv4-mapped.*loopback/],
    ["::ffff:7f00:1", /IPv4-mapped.*loopback/],
    ["fc00::1", /unique-local/],
    ["fd12:3456::1", /unique-local/],
    ["fe80::1%eth0", /link-local/],
    ["ff02::1", /multicast/],
    ["fd00:ec2::254", /metadata|unique-local/],
    ["64:ff9b::a9fe:a9fe", /NAT64.*link-local/],
    ["64:ff9b:1::a9fe:a9fe", /NAT64.*link-local/],
    ["::ffff:0:a00:1", /SIIT.*private/],
    // ipaddr.js reads a dotted tail after `::` as IPv4-mapped; URLs and resolvers give `::7f00:1` anyway.
    ["::127.0.0.1", /IPv4-(compatible|mapped).*loopback/],
    ["::7f00:1", /IPv4-compatible.*loopback/],
    ["::a9fe:a9fe", /IPv4-compatible.*link-local/],
    ["2002:7f00:1::", /6to4.*loopback/],
    ["2002:a9fe:a9fe::1", /6to4.*link-local/],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", /Teredo.*loopback/],
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", /Teredo.*private/],
    ["2001:db8::1", /documentation/],
    ["198.18.0.1", /benchmarking/],
    ["192.0.2.1", /reserved/],
    ["[::1]", /loopback/],
    ["not-an-ip", /not an IP/]
  ])("refuses %s", (ip, reason) => {
    expect(NetworkGuard.forbiddenAddress(ip)).toMatch(reason)
  })

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700::1111",
    "2a00:1450:4001:81c::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1"
  ])("allows the public address %s", (ip) => {
    expect(NetworkGuard.forbiddenAddress(ip)).toBeUndefined()
  })

  it("accepts only https URLs without credentials", () => {
    expect(NetworkGuard.checkUrl("https://hooks.example.com/a?b=1")).toEqual({
      url: "https://hooks.example.com/a?b=1",
      host: "hooks.example.com",
      plain: false
    })
    expect(NetworkGuard.checkUrl("https://[::1]:8443/x")).toMatchObject({ host: "::1" })
    for (const [url, reason] of [
      ["http://hooks.example.com", /only https/],
      ["ftp://x.example", /only https/],
      ["https://user:pw@hooks.example.com", /credentials/],
      ["hooks.example.com/path", /valid absolute URL/],
      ["", /valid absolute URL/]
    ] as const) {
      expect(NetworkGuard.checkUrl(url)).toMatchObject({ reason: expect.stringMatching(reason) })
    }
  })

  it("accepts plain http to loopback only when granted, and to nothing else", () => {
    for (const url of [
      "http://127.0.0.1:9000/h",
      "http://127.8.9.1/h",
      "http://[::1]:9000/h",
      "http://localhost:9000/h"
    ]) {
      expect(NetworkGuard.checkUrl(url, true)).toMatchObject({ plain: true })
      expect(NetworkGuard.checkUrl(url)).toMatchObject({
        reason: expect.stringMatching(/VIGIL_WEBHOOK_LOOPBACK_HTTP=1/)
      })
    }
    for (const url of [
      "http://10.0.0.1/h",
      "http://hooks.example.com/h",
      "http://[::ffff:127.0.0.1]/h",
      "http://0.0.0.0/h"
    ])
      expect(NetworkGuard.checkUrl(url, true)).toMatchObject({
        reason: expect.stringMatching(/plain http to loopback/)
      })
    expect(NetworkGuard.checkUrl("https://hooks.example.com/h", true)).toMatchObject({ plain: false })
  })
})

describe("WebhookDispatcher policy", () => {
  const settings = { ...WebhookDispatcher.defaultSettings, retries: 3, backoffMillis: 1_000 }
  const delivery = (attempts: number): WebhookStore.Delivery => ({
    id: "msg_1",
    webhookId: "wh_1",
    keyId: "k",
    correlationId: "c",
    body: "{}",
    attempts,
    nextAttemptAt: 0,
    status: "pending"
  })

  it("delivers on 2xx, disables on 410, retries with growing delays, then dead-letters", () => {
    expect(WebhookDispatcher.settlement(settings, delivery(1), WebhookTransport.classifyStatus(204), 0, 0.5)._tag).toBe(
      "Delivered"
    )
    expect(WebhookDispatcher.settlement(settings, delivery(1), WebhookTransport.classifyStatus(410), 0, 0.5)._tag).toBe(
      "Gone"
    )
    const delays = [1, 2, 3].map((n) => {
      const s = WebhookDispatcher.settlement(settings, delivery(n), WebhookTransport.classifyStatus(503), 0, 0)
      return s._tag === "Retry" ? s.at : -1
    })
    expect(delays).toEqual([500, 1000, 2000])
    expect(WebhookDispatcher.settlement(settings, delivery(4), WebhookTransport.classifyStatus(503), 0, 0)._tag).toBe(
      "Dead"
    )
    expect(WebhookDispatcher.settlement(settings, delivery(1), WebhookTransport.classifyStatus(301), 0, 0)._tag).toBe(
      "Retry"
    )
  })

  test.prop([fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.999_999, noNaN: true })])(
    "keeps every delay within [half, all] of the capped exponential",
    (n, r) => {
      const full = Math.min(settings.maxBackoffMillis, settings.backoffMillis * 2 ** (n - 1))
      const d = WebhookDispatcher.backoff(settings, n, r)
      expect(d).toBeGreaterThanOrEqual(Math.floor(full / 2))
      expect(d).toBeLessThanOrEqual(full)
    }
  )

  it("names the webhook errors with the spec's texts", () => {
    expect(new Webhooks.InvalidWebhookUrl({ reason: "x" }).message).toBe("Invalid webhook URL provided")
    expect(new Webhooks.WebhookLimitReached({ max: 5 }).message).toBe("Maximum 5 webhooks allowed per client")
    expect(new Webhooks.WebhookNotFound({ id: "wh_1" }).message).toBe("Webhook not found")
  })
})
