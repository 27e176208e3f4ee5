/** Test helper: ABI entries tests register contracts with. */

/** The ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)` event. */
export const transferEvent = {
  type: "event",
  name: "Transfer",
  inputs: [
    { name: "from", type: "address", indexed: true },
    { name: "to", type: "address", indexed: true },
    { name: "value", type: "uint256" }
  ],
  anonymous: false
}
