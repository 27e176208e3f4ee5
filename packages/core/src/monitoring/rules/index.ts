/** The watch-rule language: syntax tree, parser and printer (the checker and evaluator build on them). */
export * as Ast from "./Ast.ts"
export * as Parser from "./Parser.ts"
export * as Printer from "./Printer.ts"
