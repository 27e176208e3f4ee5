/** The reference HTTP server: every route of the API on a Node HTTP listener, as one layer. */

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { type Engine, type StorageProbe, Version } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { VigilApi } from "./Api.ts"
import * as BotHandlers from "./BotHandlers.ts"
import * as Console from "./Console.ts"
import * as ContractHandlers from "./ContractHandlers.ts"
import * as Edge from "./Edge.ts"
import * as GatedServer from "./GatedServer.ts"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as HotRoutes from "./HotRoutes.ts"
import * as IntelHandlers from "./IntelHandlers.ts"
import { limits } from "./Limits.ts"
import * as ListsHandlers from "./ListsHandlers.ts"
import * as Routes from "./Routes.ts"
import * as RulesHandlers from "./RulesHandlers.ts"
import * as NotificationHandlers from "./NotificationHandlers.ts"
import * as SystemHandlers from "./SystemHandlers.ts"
import * as WebhookHandlers from "./WebhookHandlers.ts"

/** The listener's limits (in their own module, which a command line reads without loading the server). */
export { limits }

/** The default cap on request bodies. */
export const defaultMaxBodyBytes = limits.maxBodyBytes.default

/** Where to listen. Port 0 picks a free port; the chosen one is in the log line. */
export interface Options {
  readonly host: string
  readonly port: number
  /** Appended to the listening line, e.g. which storage is in use. */
  readonly detail?: string
  /** Requests with a larger body are answered 413; default {@link defaultMaxBodyBytes}. */
  readonly maxBodyBytes?: number
  /**
   * Serve v3 single and v2 intel straight from Node's request event (see `HotRoutes`); default true. With false
   * every request goes through the HttpApi router, which answers the same.
   */
  readonly hotRoutes?: boolean
  /** Connection limits of the listener (see {@link GatedServer.Limits}); defaults from {@link limits}. */
  readonly connections?: Partial<GatedServer.Limits>
  /** The folder of the console's build (`index.html`, `assets/`), served at `/console/`. Default: no console. */
  readonly consoleDir?: string
}

/** The connection limits `options` asks for, defaults filled in. */
const connectionLimits = (options: Options): GatedServer.Limits => ({
  headersTimeoutMillis: options.connections?.headersTimeoutMillis ?? limits.headersTimeoutMillis.default,
  requestTimeoutMillis: options.connections?.requestTimeoutMillis ?? limits.requestTimeoutMillis.default,
  maxConnections: options.connections?.maxConnections ?? GatedServer.defaultMaxConnections()
})

/** The services the server's handlers need: core's (`Engine.layer`) and a storage probe. */
export type Requirements = StorageProbe.StorageProbe | Engine.Services

/** What serving files and documents needs from the platform (provided by the Node listener or `HttpServer.layerServices`). */
export type PlatformServices = Layer.Success<typeof HttpServer.layerServices>

const routesOver = (
  options: { readonly maxBodyBytes?: number; readonly consoleDir?: string } = {}
): Layer.Layer<never, never, Requirements | HttpMetrics | HttpRouter.HttpRouter | PlatformServices> =>
  Layer.mergeAll(
    options.consoleDir === undefined ? Layer.empty : Console.layer(options.consoleDir),
    HttpApiBuilder.layer(VigilApi, { openapiPath: Routes.openapiPath }).pipe(
      Layer.provide([
        SystemHandlers.layer,
        IntelHandlers.v3Layer,
        IntelHandlers.v2Layer,
        IntelHandlers.statusLayer,
        ListsHandlers.layer,
        RulesHandlers.layer,
        WebhookHandlers.layer,
        ContractHandlers.layer,
        BotHandlers.layer,
        NotificationHandlers.layer
      ])
    ),
    // The reference page loads nothing from other hosts: no CDN (the script is bundled), no web fonts.
    HttpApiScalar.layer(VigilApi, { path: Routes.docsPath, scalar: { withDefaultFonts: false } }),
    Edge.layer(options.maxBodyBytes ?? defaultMaxBodyBytes)
  )

/**
 * Every route of the API, plus `/openapi.json`, `/docs` and (given its build) the console, on a router (for a
 * listener or a web handler).
 */
export const routes = (
  options: { readonly maxBodyBytes?: number; readonly consoleDir?: string } = {}
): Layer.Layer<never, never, Requirements | HttpRouter.HttpRouter | PlatformServices> =>
  routesOver(options).pipe(Layer.provide(HttpMetrics.layer))

/**
 * The Node listener, with the hot routes in front of the router unless they are turned off. It listens before
 * the router's handler is attached, so it holds what arrives in between (`GatedServer`).
 */
const listener = (options: Options) =>
  Layer.effect(HttpServer.HttpServer)(
    Effect.gen(function* () {
      const listen = { host: options.host, port: options.port }
      const connections = connectionLimits(options)
      if (options.hotRoutes === false) {
        return yield* NodeHttpServer.make(() => new GatedServer.GatedServer(connections), listen)
      }
      const lane = yield* HotRoutes.make(options.maxBodyBytes ?? defaultMaxBodyBytes)
      return yield* NodeHttpServer.make(() => new HotRoutes.LaneServer(lane, connections), listen)
    })
  )

/**
 * Serves the API on `host:port`. A request that arrives before the router's handler is attached is held and
 * answered once it is; the listening line is logged after that.
 * The layer exposes the `HttpServer`, whose `address` tells the bound port when `port` is 0.
 */
export const layer = (options: Options): Layer.Layer<HttpServer.HttpServer, ServeError, Requirements> =>
  Layer.effectDiscard(
    HttpServer.addressFormattedWith((url) =>
      Effect.logInfo(`Vigil ${Version.version} listening on ${url}${options.detail ? ` (${options.detail})` : ""}`)
    )
  ).pipe(
    Layer.provideMerge(HttpRouter.serve(routesOver(options), { disableLogger: true, disableListenLog: true })),
    Layer.provideMerge(listener(options)),
    Layer.provide(NodeHttpServer.layerHttpServices),
    Layer.provide(HttpMetrics.layer)
  )
