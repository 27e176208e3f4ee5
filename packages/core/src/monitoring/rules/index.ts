/** The watch-rule language: syntax tree, parser, printer, literal definitions, the checker, and the evaluator over decoded facts. */
export * as Ast from "./Ast.ts"
export * as Checker from "./Checker.ts"
export * as Evaluator from "./Evaluator.ts"
export * as Facts from "./Facts.ts"
export * as Literals from "./Literals.ts"
export * as Parser from "./Parser.ts"
export * as Printer from "./Printer.ts"
export * as Reads from "./Reads.ts"
