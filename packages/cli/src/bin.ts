#!/usr/bin/env node
/** Entry point of the `vigil` executable. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { run, teardown } from "./Cli.ts"

run(process.argv.slice(2)).pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain({ teardown }))
