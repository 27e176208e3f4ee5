/**
 * The types a rule compares: the family of each ABI type (what a `system.*Compare` takes), the ABI types of the
 * fields of transactions and frames, and parameter lists read from the type texts of a signature.
 */
import type * as AbiModule from "./Abi.ts"
import type * as Ast from "./Ast.ts"
import type { frameFields, txFields } from "./Ast.ts"

export type Family = "uint" | "int" | "address" | "bool" | "string" | "bytes"

export const familyOf = (type: string): Family | undefined =>
  /^uint\d*$/.test(type)
    ? "uint"
    : /^int\d*$/.test(type)
      ? "int"
      : type === "address"
        ? "address"
        : type === "bool"
          ? "bool"
          : type === "string"
            ? "string"
            : /^bytes\d*$/.test(type)
              ? "bytes"
              : undefined

export const comparatorFamily: { readonly [C in Ast.Comparator]: Family } = {
  uintCompare: "uint",
  intCompare: "int",
  addressCompare: "address",
  boolCompare: "bool",
  stringCompare: "string",
  bytesCompare: "bytes"
}

export const familyComparator = (family: Family): Ast.Comparator =>
  (Object.keys(comparatorFamily) as Array<Ast.Comparator>).find((c) => comparatorFamily[c] === family)!

/** The ABI types of the fields of a top-level transaction and of a frame. */
export const txFieldType: { readonly [F in (typeof txFields)[number] | "riskscore"]: string } = {
  from: "address",
  to: "address",
  value: "uint256",
  hash: "bytes32",
  nonce: "uint64",
  input: "bytes",
  status: "bool",
  gasPrice: "uint256",
  gasLimit: "uint64",
  gasUsed: "uint64",
  maxFeePerGas: "uint256",
  maxPriorityFeePerGas: "uint256",
  blockNumber: "uint64",
  txIndex: "uint32",
  timestamp: "uint64",
  riskscore: "uint8"
}
export const frameFieldType: { readonly [F in (typeof frameFields)[number] | "riskscore"]: string } = {
  from: "address",
  to: "address",
  value: "uint256",
  type: "string",
  gas: "uint64",
  gasUsed: "uint64",
  input: "bytes",
  output: "bytes",
  error: "string",
  depth: "uint32",
  selector: "bytes4",
  riskscore: "uint8"
}

/** A parameter list read from type texts (a `*` contract's signature): positions only, no names. */
export const parametersOf = (types: ReadonlyArray<string>): ReadonlyArray<AbiModule.Parameter> => {
  const one = (text: string): AbiModule.Parameter => {
    if (!text.startsWith("(")) return { type: text }
    let depth = 0
    let end = 0
    for (let i = 0; i < text.length; i++) {
      if (text[i] === "(") depth++
      else if (text[i] === ")" && --depth === 0) {
        end = i
        break
      }
    }
    const inner: Array<string> = []
    let start = 1
    depth = 0
    for (let i = 1; i < end; i++) {
      if (text[i] === "(") depth++
      else if (text[i] === ")") depth--
      else if (text[i] === "," && depth === 0) {
        inner.push(text.slice(start, i))
        start = i + 1
      }
    }
    if (end > 1) inner.push(text.slice(start, end))
    return { type: `tuple${text.slice(end + 1)}`, components: inner.map(one) }
  }
  return types.map(one)
}
