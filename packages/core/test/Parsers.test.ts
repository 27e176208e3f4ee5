import { Ingestion } from "@vigil/core"
import { assert, describe, it } from "vitest"

const { AddressList, OfacSdnXml, UsdtEvents } = Ingestion

/** Feeds text in small chunks, as a stream would, so no parser may rely on whole lines or elements. */
const feed = (parser: Ingestion.Parser.Parser, text: string, size = 7) => {
  const out = []
  for (let i = 0; i < text.length; i += size) out.push(...parser.write(text.slice(i, i + size)))
  out.push(...parser.end())
  return out
}

describe("address-list", () => {
  it("reads one address per line, normalises, skips comments, blanks and invalid lines with reasons", () => {
    const parser = AddressList.make({ list: "team-blocklist", category: "scam", label: "Team blocklist" })
    const records = feed(
      parser,
      "# our list\n0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\r\n\nTR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t\nnot-an-address\n  bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4  "
    )
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.family, r.category, r.reference, r.label]),
      [
        ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "evm", "scam", "team-blocklist", "Team blocklist"],
        ["TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "tron", "scam", "team-blocklist", "Team blocklist"],
        ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "bitcoin", "scam", "team-blocklist", "Team blocklist"]
      ]
    )
    assert.deepStrictEqual(parser.skipped(), {
      count: 1,
      reasons: ["line 5: not-an-address: not the format of any supported network"]
    })
  })

  it("reads a JSON array and refuses JSON that is not an array of strings", () => {
    const records = feed(
      AddressList.make({ list: "l", category: "mixer" }),
      '  ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", 7]'
    )
    assert.strictEqual(records.length, 1)
    assert.throws(() => feed(AddressList.make({ list: "l", category: "mixer" }), '["unterminated'), /not valid JSON/)
    assert.throws(() => feed(AddressList.make({ list: "l", category: "mixer" }), "[1] x"), /not valid JSON/)
  })
})

describe("usdt-events", () => {
  const header =
    "event_name,block_number,txhash,log_index,timestamp,_balance,_blackListedUser,maxFee,newAddress,amount,_user,feeBasisPoints,contract_address,msg.sender\n"
  const row = (name: string, block: number, log: number, when: string, user: string, tx = `0xtx${block}`) =>
    `${name},${block},${tx},${log},${when},,,,,,${user},,0xdAC17F958D2ee523a2206206994597C13D831ec7,0xsender\n`

  it("replays freezes and unfreezes in block order into intervals, dated by the events", () => {
    const parser = UsdtEvents.make({ label: "USDT" })
    const records = feed(
      parser,
      header +
        row("RemovedBlackList", 4638882, 87, "2017-11-28T16:59:39", "0x9faf5515f177F3A8a845D48C19032b33Cc54C09C") +
        row("AddedBlackList", 4638805, 65, "2017-11-28T16:39:10", "0x9faf5515f177F3A8a845D48C19032b33Cc54C09C") +
        row("Issue", 4638757, 5, "2017-11-28T16:24:26", "") +
        row("AddedBlackList", 9000000, 1, "2019-12-01T00:00:00", "0x6F5901E3c53A51Fce8EdC15F6fa2b01B24226dCc") +
        "\u001a\n",
      13
    )
    assert.deepStrictEqual(records.map((r) => [r.address, r.listedAt, r.delistedAt ?? null, r.reference]).sort(), [
      ["0x6f5901e3c53a51fce8edc15f6fa2b01b24226dcc", "2019-12-01", null, "0xtx9000000"],
      ["0x9faf5515f177f3a8a845d48c19032b33cc54c09c", "2017-11-28", "2017-11-28", "0xtx4638805"]
    ])
    assert.strictEqual(parser.asOf(), "2019-12-01")
  })

  it("reads quoted cells that hold commas", () => {
    const quoted = `AddedBlackList,9000001,0xq,2,2019-12-02T00:00:00,"1,000",,,,,0x6F5901E3c53A51Fce8EdC15F6fa2b01B24226dCc,,0xc,"0xs, relayed"\n`
    const records = feed(UsdtEvents.make({ label: "USDT" }), header + quoted, 11)
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.listedAt, r.reference]),
      [["0x6f5901e3c53a51fce8edc15f6fa2b01b24226dcc", "2019-12-02", "0xq"]]
    )
  })

  it("refuses a file without the expected header", () => {
    assert.throws(
      () => feed(UsdtEvents.make({ label: "USDT" }), "a,b,c\n1,2,3\n"),
      /header lacks column\(s\) event_name/
    )
  })
})

describe("ofac-sdn-xml", () => {
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<Sanctions xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADVANCED_XML">
  <DateOfIssue CalendarTypeID="1"><Year>2025</Year><Month>3</Month><Day>4</Day></DateOfIssue>
  <ReferenceValueSets>
    <FeatureTypeValues>
      <FeatureType ID="345" FeatureTypeGroupID="1">Digital Currency Address - ETH</FeatureType>
      <FeatureType ID="566" FeatureTypeGroupID="1">Digital Currency Address - LTC</FeatureType>
      <FeatureType ID="13" FeatureTypeGroupID="2">SWIFT/BIC</FeatureType>
    </FeatureTypeValues>
    <PartySubTypeValues><PartySubType ID="3" PartyTypeID="2">Unknown</PartySubType></PartySubTypeValues>
    <PartyTypeValues><PartyType ID="2">Entity</PartyType></PartyTypeValues>
  </ReferenceValueSets>
  <DistinctParties>
    <DistinctParty FixedRef="36118">
      <Profile ID="36118" PartySubTypeID="3">
        <Identity ID="1" FixedRef="36118" Primary="true">
          <Alias FixedRef="36118" AliasTypeID="1403" Primary="true" LowQuality="false">
            <DocumentedName ID="1"><DocumentedNamePart><NamePartValue NamePartGroupID="1">TORNADO CASH</NamePartValue></DocumentedNamePart></DocumentedName>
          </Alias>
        </Identity>
        <Feature ID="1" FeatureTypeID="345"><FeatureVersion ID="1"><VersionDetail DetailTypeID="1432">0x8589427373D6D84E98730D7795D8f6f8731FDA16</VersionDetail></FeatureVersion></Feature>
        <Feature ID="2" FeatureTypeID="566"><FeatureVersion ID="2"><VersionDetail DetailTypeID="1432">LaizKtS5DUhPuP1nTQcc83MS7HwK6vk85z</VersionDetail></FeatureVersion></Feature>
        <Feature ID="3" FeatureTypeID="13"><FeatureVersion ID="3"><VersionDetail DetailTypeID="1432">KYCBKPPY</VersionDetail></FeatureVersion></Feature>
      </Profile>
    </DistinctParty>
  </DistinctParties>
  <SanctionsEntries>
    <SanctionsEntry ID="36118" ProfileID="36118" ListID="1550">
      <EntryEvent ID="1" EntryEventTypeID="1"><Date CalendarTypeID="1"><Year>2022</Year><Month>8</Month><Day>8</Day></Date></EntryEvent>
      <SanctionsMeasure ID="1" SanctionsTypeID="1"><Comment>CYBER2</Comment></SanctionsMeasure>
    </SanctionsEntry>
  </SanctionsEntries>
</Sanctions>`

  it("extracts digital-currency addresses with the party's name, type, programs and entry date", () => {
    const parser = OfacSdnXml.make()
    const records = feed(parser, xml, 11)
    assert.strictEqual(parser.asOf(), "2025-03-04")
    assert.deepStrictEqual(records, [
      {
        address: "0x8589427373d6d84e98730d7795d8f6f8731fda16",
        family: "evm",
        category: "sanctions",
        reference: "SDN 36118 ETH",
        jurisdiction: "US",
        entityName: "TORNADO CASH",
        entityType: "entity",
        label: "OFAC SDN (CYBER2)",
        listedAt: "2022-08-08"
      }
    ])
    assert.deepStrictEqual(parser.skipped().reasons, [
      "SDN 36118 LTC: LaizKtS5DUhPuP1nTQcc83MS7HwK6vk85z: a Litecoin address, not a supported network"
    ])
  })

  it("refuses XML that is not well formed, or not an SDN file, naming where", () => {
    assert.throws(() => feed(OfacSdnXml.make(), "<Sanctions><DateOfIssue></Sanctions>"), /XML line 1/)
    assert.throws(() => feed(OfacSdnXml.make(), "<Other/>"), /no DateOfIssue/)
  })
})

describe("graphsense", () => {
  const pack = `title: Ransomwhere tag pack
creator: GraphSense Core Team
lastmod: 2022-02-15
abuse: ransomware
source: https://ransomwhe.re/
tags:
- address: '17TMc2UkVRSga2yYvuxSD9Q1XyB2EPRjTF'
  currency: BTC
  label: Netwalker (Mailto)
- address: '0x008fe40574e881e7247b50b991c0cc057d66647f'
  currency: ETH
  category: exchange
  abuse: null
  label: some exchange
  source: https://etherscan.io/labelcloud
- address: 'LaizKtS5DUhPuP1nTQcc83MS7HwK6vk85z'
  currency: LTC
`

  it("applies pack defaults, lets tags override them, and maps abuse and category", () => {
    const parser = Ingestion.GraphSense.make()
    const records = feed(parser, pack, 9)
    assert.strictEqual(parser.asOf(), "2022-02-15")
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.family, r.category, r.label, r.reference]),
      [
        ["17TMc2UkVRSga2yYvuxSD9Q1XyB2EPRjTF", "bitcoin", "ransomware", "Netwalker (Mailto)", "Ransomwhere tag pack"],
        ["0x008fe40574e881e7247b50b991c0cc057d66647f", "evm", "exchange", "some exchange", "Ransomwhere tag pack"]
      ]
    )
    assert.deepStrictEqual(parser.skipped().reasons, ["tag 2: LTC currency is not a screened network"])
    // What each entry cites: the pack's source, or the tag's own.
    assert.deepStrictEqual(
      records.map((r) => r.cites),
      ["https://ransomwhe.re/", "https://etherscan.io/labelcloud"]
    )
  })

  it("skips a tag that is not a mapping, with the decoder's reason", () => {
    const parser = Ingestion.GraphSense.make()
    const records = feed(
      parser,
      "abuse: scam\ncurrency: ETH\ntags:\n- just text\n- address: '0x008fe40574e881e7247b50b991c0cc057d66647f'\n"
    )
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.category]),
      [["0x008fe40574e881e7247b50b991c0cc057d66647f", "scam"]]
    )
    assert.lengthOf(parser.skipped().reasons, 1)
    assert.match(parser.skipped().reasons[0]!, /^tag 0: Expected/)
  })

  it("refuses YAML that is not a TagPack", () => {
    assert.throws(() => feed(Ingestion.GraphSense.make(), "title: x\n"), /not a TagPack: tags: required/)
    assert.throws(() => feed(Ingestion.GraphSense.make(), "tags: 5\n"), /not a TagPack: tags: Expected array/)
    assert.throws(() => feed(Ingestion.GraphSense.make(), "tags: [\n"), /YAML/)
  })
})

describe("labels", () => {
  const records = (text: string, options: Partial<Ingestion.Labels.Options> = {}) => {
    const parser = Ingestion.Labels.make({ list: "l", ...options })
    return { records: feed(parser, text, 5), parser }
  }

  it("reads Forta's malicious labels CSV, quoted fields included, and maps tags to categories", () => {
    const { records: rs } = records(
      'banned_address,wallet_tag,data_source\n0x80d7bb18521acbef32d7906502ebe94928690e93,Fake_Phishing1772,etherscan\n0x098b716b8aaf21512996dc57eb0615e2383e2f96,"Ronin Bridge Exploiter, 1",etherscan\n'
    )
    assert.deepStrictEqual(
      rs.map((r) => [r.address, r.category, r.label]),
      [
        ["0x80d7bb18521acbef32d7906502ebe94928690e93", "phishing", "Fake_Phishing1772"],
        ["0x098b716b8aaf21512996dc57eb0615e2383e2f96", "exploit", "Ronin Bridge Exploiter, 1"]
      ]
    )
  })

  it("reads the MEW darklist with its dates, ScamSniffer's domain map and explorer label objects", () => {
    const mew = records(
      '[{"address":"0xF193a9aFb00715AaCF7ca9Ebffafe02C77517C2E","comment":"Fake copy of ROCK2PAY token","date":"2018-11-06"}]'
    )
    assert.deepStrictEqual(
      mew.records.map((r) => [r.category, r.listedAt, r.label]),
      [["scam", "2018-11-06", "Fake copy of ROCK2PAY token"]]
    )
    const sniffer = records('{"degenalgo.art":["0x3da02e1f29bcbed185eca0d3299efd46e6e7e155"]}')
    assert.deepStrictEqual(
      sniffer.records.map((r) => [r.category, r.label]),
      [["phishing", "Phishing: degenalgo.art"]]
    )
    const explorer = records(
      '{"0x0e8ba001a821f3ce0734763d008c9d7c957f5852":{"name":"AmadeusRelay","labels":["0x-protocol-ecosystem","dex"]},"0x28c6c06298d514db089934071355e5743bf21d60":{"name":"Binance 14","labels":["exchange"]},"0x1111111111111111111111111111111111111111":{"name":"x","labels":["nft"]}}'
    )
    assert.deepStrictEqual(
      explorer.records.map((r) => [r.category, r.entityName]),
      [
        ["service", "AmadeusRelay"],
        ["exchange", "Binance 14"]
      ]
    )
    assert.strictEqual(explorer.parser.skipped().count, 1)
  })

  it("needs a category for an explorer accounts folder and refuses an unknown format", () => {
    assert.throws(
      () => records('[{"address":"0x0000000000000000000000000000000000000018","nameTag":""}]'),
      /needs --category/
    )
    const withCategory = records('[{"address":"0x0000000000000000000000000000000000000018","nameTag":""}]', {
      category: "stablecoin_blacklist"
    })
    assert.strictEqual(withCategory.records[0]?.category, "stablecoin_blacklist")
    assert.throws(() => records("hello,world\n1,2\n"), /unknown label format/)
  })
})

describe("ofac-sdn-csv", () => {
  it("reads addresses from the Remarks of the legacy CSV, with name, type and program", () => {
    const row =
      '25308,"YAN, Xiaobing","individual","SDNTK",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"DOB 25 Mar 1977; Digital Currency Address - XBT 12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h; alt. Digital Currency Address - LTC LaizKtS5DUhPuP1nTQcc83MS7HwK6vk85z; alt. Digital Currency Address - ETH 0x8589427373D6D84E98730D7795D8f6f8731FDA16."\n'
    const parser = Ingestion.OfacSdnCsv.make()
    const records = feed(parser, `${row}\u001a`, 17)
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.reference, r.entityName, r.entityType, r.label]),
      [
        ["12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h", "SDN 25308 XBT", "YAN, Xiaobing", "individual", "OFAC SDN (SDNTK)"],
        [
          "0x8589427373d6d84e98730d7795d8f6f8731fda16",
          "SDN 25308 ETH",
          "YAN, Xiaobing",
          "individual",
          "OFAC SDN (SDNTK)"
        ]
      ]
    )
    assert.strictEqual(parser.skipped().count, 1)
    assert.throws(() => feed(Ingestion.OfacSdnCsv.make(), "name,type\nx,y\n"), /legacy sdn.csv/)
  })
})

describe("address-list line numbers", () => {
  it("counts blank lines that arrive in chunks of their own", () => {
    const parser = Ingestion.AddressList.make({ list: "l", category: "scam" })
    parser.write("\n\n")
    parser.write("bad-one\n")
    parser.end()
    assert.deepStrictEqual(parser.skipped().reasons, ["line 3: bad-one: not the format of any supported network"])
  })
})

describe("label and list JSON formats", () => {
  const good = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"

  it("skips an entry that does not fit its format with the decoder's reason, and keeps the rest", () => {
    const darklist = Ingestion.Labels.make({ list: "mew", format: "mew-darklist" })
    const records = feed(
      darklist,
      JSON.stringify([{ address: good, comment: "Fake MEW" }, { address: 5 }, "0xabc", { comment: "no address" }])
    )
    assert.deepStrictEqual(
      records.map((r) => [r.address, r.label]),
      [[good, "Fake MEW"]]
    )
    assert.deepStrictEqual(darklist.skipped().reasons, [
      "item 1: address: Expected string",
      "item 2: Expected object",
      "item 3: address: required"
    ])
    const explorer = Ingestion.Labels.make({ list: "x", format: "explorer" })
    feed(explorer, JSON.stringify({ [good]: { name: "Hacker", labels: "Exploiter" } }))
    assert.deepStrictEqual(explorer.skipped().reasons, [`${good}: labels: Expected array`])
    const list = AddressList.make({ list: "l", category: "scam" })
    assert.strictEqual(feed(list, JSON.stringify([good, 7])).length, 1)
    assert.deepStrictEqual(list.skipped().reasons, ["item 1: Expected string"])
  })

  it("refuses a file whose top level is not the format's", () => {
    assert.throws(
      () => feed(Ingestion.Labels.make({ list: "mew", format: "mew-darklist" }), '{"a":1}'),
      /expected an array of \{address, comment, date\}/
    )
    assert.throws(
      () => feed(Ingestion.Labels.make({ list: "s", format: "scamsniffer" }), '{"a.example":"0xabc"}'),
      /expected an array of addresses or an object of domain → addresses/
    )
  })
})
