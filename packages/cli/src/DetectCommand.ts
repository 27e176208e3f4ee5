/** `vigil detect <address>...`: one JSON line per address saying which networks it is valid on, or why not. */
import { Chain } from "@vigil/core"
import { Console, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"

const chain = Flag.Literals("chain", ["auto", ...Chain.Network.literals]).pipe(
  Flag.withDescription("Require the address to be valid on this network"),
  Flag.withDefault("auto" as const)
)

/** The JSON line printed for one address (`family`, `networks`, `normalized` only when valid, with a `warning` when there is one; `reason` when not). */
export const line = (detection: Chain.Detection): string =>
  JSON.stringify(
    detection.valid
      ? {
          address: detection.address,
          valid: true,
          family: detection.family,
          networks: detection.networks,
          normalized: detection.normalized,
          format: detection.format,
          ...(detection.warning === undefined ? {} : { warning: detection.warning })
        }
      : { address: detection.address, valid: false, reason: detection.reason }
  )

/** Prints one line per address; exits 0 even when some are invalid (the lines say so). */
export const command = Command.make(
  "detect",
  { addresses: Argument.String("address").pipe(Argument.atLeast(1)), chain },
  ({ addresses, chain }) => Effect.forEach(addresses, (address) => Console.log(line(Chain.detect(address, chain))))
).pipe(
  Command.withDescription("Detect the network of addresses from their format, with checksum validation"),
  Command.withExamples([
    {
      command: "vigil detect 0x098B716B8Aaf21512996dC57EB0615e2383E2f96 bc1qa5wkgaew2dkv56kfvj49j0av5nml45x9ek9hz6",
      description: "Which networks each address is valid on"
    }
  ])
)
