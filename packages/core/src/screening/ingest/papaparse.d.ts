/** The part of papaparse core uses, declared here because @types/papaparse pulls in Node's types. */
declare module "papaparse" {
  export interface ParseError {
    readonly row?: number
    readonly message: string
  }
  export interface ParseResult<T> {
    readonly data: Array<T>
    readonly errors: Array<ParseError>
    readonly meta: { readonly fields?: Array<string> }
  }
  export interface ParseConfig {
    readonly header?: boolean
    readonly skipEmptyLines?: boolean | "greedy"
  }
  const Papa: { parse<T>(input: string, config: ParseConfig): ParseResult<T> }
  export default Papa
}
