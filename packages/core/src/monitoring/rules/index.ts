/** The watch-rule language: syntax tree, parser, printer, literal definitions and the checker. */
export * as Ast from "./Ast.ts"
export * as Checker from "./Checker.ts"
export * as Literals from "./Literals.ts"
export * as Parser from "./Parser.ts"
export * as Printer from "./Printer.ts"
