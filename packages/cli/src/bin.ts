#!/usr/bin/env node
/** Entry point of the `vigil` executable. */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { run, teardown } from "./Cli.ts"

run(process.argv.slice(2)).pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain({ teardown }))
