/** Every test file: answers of a Vigil server reached with `fetch` are checked against its `/openapi.json`. */
import { installFetchCheck } from "./packages/adapter-http/test/OpenApiConformance.ts"

installFetchCheck()
