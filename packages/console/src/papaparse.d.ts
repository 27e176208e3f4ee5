/**
 * The part of papaparse the console (and the test of its CSV) uses, declared here because @types/papaparse pulls
 * in Node's types.
 */
declare module "papaparse" {
  export interface UnparseConfig {
    readonly newline?: string
    /** Cells matching it are prefixed with `'`, so a spreadsheet shows them as text instead of running them. */
    readonly escapeFormulae?: boolean | RegExp
  }
  const Papa: {
    parse<T>(input: string, config?: { readonly skipEmptyLines?: boolean }): { readonly data: Array<T> }
    unparse(
      data: { readonly fields: ReadonlyArray<string>; readonly data: ReadonlyArray<ReadonlyArray<unknown>> },
      config?: UnparseConfig
    ): string
  }
  export default Papa
}
