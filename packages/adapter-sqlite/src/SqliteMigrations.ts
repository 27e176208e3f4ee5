/** Ordered schema migrations, each applied once in its own transaction and recorded in the database. */
import { StoreError } from "@vigil/core"
import type Database from "better-sqlite3"

/** One schema step. Versions start at 1 and increase by one; a released step is never edited, only followed. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** Every migration this build knows, in order. */
export const migrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "quota_windows",
    sql: `
      CREATE TABLE quota_windows (
        key TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        window_end INTEGER NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (key, window_start)
      ) WITHOUT ROWID;
      CREATE INDEX quota_windows_by_end ON quota_windows (window_end);
    `
  },
  {
    version: 2,
    name: "intel_index",
    sql: `
      CREATE TABLE intel_versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        list TEXT NOT NULL,
        source TEXT NOT NULL,
        kind TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('snapshot', 'history')),
        as_of TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        origin TEXT NOT NULL,
        ingested_at TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('staged', 'committed'))
      );
      CREATE TABLE intel_staged (
        version INTEGER NOT NULL REFERENCES intel_versions (id) ON DELETE CASCADE,
        record TEXT NOT NULL
      );
      CREATE INDEX intel_staged_by_version ON intel_staged (version);
      CREATE TABLE intel_records (
        id INTEGER PRIMARY KEY,
        list TEXT NOT NULL,
        source TEXT NOT NULL,
        address TEXT NOT NULL,
        family TEXT NOT NULL,
        category TEXT NOT NULL,
        reference TEXT NOT NULL,
        jurisdiction TEXT,
        entity_name TEXT,
        entity_type TEXT,
        label TEXT,
        listed_at TEXT NOT NULL,
        delisted_at TEXT,
        ingested_at TEXT NOT NULL
      );
      CREATE INDEX intel_records_by_address ON intel_records (address);
      CREATE INDEX intel_records_by_list ON intel_records (list, delisted_at);
      CREATE TABLE intel_lists (
        list TEXT PRIMARY KEY,
        version INTEGER NOT NULL REFERENCES intel_versions (id)
      );
    `
  },
  {
    version: 3,
    name: "api_keys",
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL,
        qps INTEGER NOT NULL,
        daily INTEGER NOT NULL,
        monthly INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        revoked_at TEXT
      );
    `
  },
  {
    version: 4,
    name: "webhooks",
    sql: `
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        created TEXT NOT NULL,
        delivery_count INTEGER NOT NULL DEFAULT 0,
        last_delivery TEXT,
        disabled_at TEXT
      );
      CREATE INDEX webhooks_by_key ON webhooks (key_id);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        correlation_id TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
        last_error TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, status);
    `
  },
  {
    version: 5,
    name: "intel_deletions",
    sql: `
      CREATE TABLE intel_deletions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        list TEXT NOT NULL,
        version INTEGER NOT NULL,
        records INTEGER NOT NULL,
        deleted_at TEXT NOT NULL
      );
    `
  },
  {
    version: 6,
    name: "intel_history",
    // Lists get an authority (existing ones the default of their kind); versions keep what they contained from
    // now on (intel_staged rows stay after commit), can be withdrawn, and amendments are recorded.
    sql: `
      ALTER TABLE intel_versions ADD COLUMN authority TEXT NOT NULL DEFAULT 'curated'
        CHECK (authority IN ('official', 'curated', 'scraped'));
      UPDATE intel_versions SET authority = 'official' WHERE kind IN ('ofac-sdn-xml', 'ofac-sdn-csv', 'usdt-events');
      UPDATE intel_versions SET authority = 'scraped' WHERE kind = 'labels';
      ALTER TABLE intel_versions ADD COLUMN contents_kept INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE intel_versions ADD COLUMN withdrawn_at TEXT;
      UPDATE intel_versions SET withdrawn_at = (
          SELECT min(d.deleted_at) FROM intel_deletions d
          WHERE d.list = intel_versions.list AND d.deleted_at >= intel_versions.ingested_at)
        WHERE state = 'committed';
      CREATE TABLE intel_amendments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        list TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('rollback', 'redate')),
        version INTEGER NOT NULL,
        detail TEXT NOT NULL,
        at TEXT NOT NULL
      );
    `
  },
  {
    version: 7,
    name: "verification",
    // A row the health probe writes (a real write: it fails on a read-only file or a full disk), and a digest of
    // each list's records, written with every change to them and verified at open.
    sql: `
      CREATE TABLE vigil_health (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at TEXT NOT NULL);
      ALTER TABLE intel_lists ADD COLUMN records_digest TEXT;
    `
  },
  {
    version: 8,
    name: "monitor contracts",
    // Contracts registered for monitoring; a label names one contract per key and chain.
    sql: `
      CREATE TABLE monitor_contracts (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        address TEXT NOT NULL,
        label TEXT NOT NULL,
        abi TEXT NOT NULL,
        abi_source TEXT NOT NULL,
        proxy_implementation TEXT,
        created TEXT NOT NULL,
        UNIQUE (key_id, chain_id, label)
      );
      CREATE INDEX monitor_contracts_by_key ON monitor_contracts (key_id, chain_id, created);
    `
  },
  {
    version: 9,
    name: "monitor bots",
    // Bots as JSON documents beside the columns they are found, ordered and revised by.
    sql: `
      CREATE TABLE monitor_bots (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        created TEXT NOT NULL,
        body TEXT NOT NULL
      );
      CREATE INDEX monitor_bots_by_key ON monitor_bots (key_id, chain_id, created);
    `
  },
  {
    version: 10,
    name: "monitor blocks",
    // Blocks read for historical analysis (shared by every bot), and the blocks each bot was given.
    sql: `
      CREATE TABLE monitor_blocks (
        chain_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        hash TEXT NOT NULL,
        traces INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (chain_id, number)
      );
      CREATE TABLE monitor_bot_blocks (
        bot_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        PRIMARY KEY (bot_id, number)
      );
    `
  },
  {
    version: 11,
    name: "notification channels",
    // A notification channel is a destination of the webhook outbox with its settings (JSON); NULL for an
    // intelligence webhook.
    sql: `
      ALTER TABLE webhooks ADD COLUMN channel TEXT;
      CREATE INDEX webhook_deliveries_errors ON webhook_deliveries (webhook_id, last_error) WHERE last_error IS NOT NULL;
    `
  },
  {
    version: 12,
    name: "following chains",
    // Each followed chain's cursor and recent block hashes, and the alerts of live monitoring.
    sql: `
      CREATE TABLE follow_cursors (
        chain_id INTEGER PRIMARY KEY,
        number INTEGER NOT NULL,
        hash TEXT NOT NULL,
        parent_hash TEXT NOT NULL
      );
      CREATE TABLE follow_marks (
        chain_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        hash TEXT NOT NULL,
        parent_hash TEXT NOT NULL,
        PRIMARY KEY (chain_id, number)
      );
      CREATE TABLE monitor_alerts (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        bot_id TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        block_hash TEXT NOT NULL,
        rule INTEGER NOT NULL,
        expression TEXT NOT NULL,
        transactions TEXT NOT NULL,
        evidence TEXT NOT NULL,
        created TEXT NOT NULL,
        retracted_at TEXT
      );
      CREATE INDEX monitor_alerts_by_bot ON monitor_alerts (bot_id);
      CREATE INDEX monitor_alerts_live ON monitor_alerts (chain_id, block_number) WHERE retracted_at IS NULL;
      CREATE INDEX webhook_deliveries_by_correlation ON webhook_deliveries (correlation_id);
    `
  },
  {
    version: 13,
    name: "alert notification limits",
    // The block time of each alert, the clock of a bot's notification limits, and why an alert was not notified.
    sql: `
      ALTER TABLE monitor_alerts ADD COLUMN block_time INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE monitor_alerts ADD COLUMN suppressed TEXT;
      CREATE INDEX monitor_alerts_by_bot_time ON monitor_alerts (bot_id, block_time) WHERE retracted_at IS NULL;
    `
  },
  {
    version: 14,
    name: "bots watch from their creation",
    // How far each bot was run on its chain, from the block it watches from: a bot the follower reached late is
    // run over the blocks it lacks.
    sql: `
      CREATE TABLE follow_coverage (
        chain_id INTEGER NOT NULL,
        bot_id TEXT NOT NULL,
        from_block INTEGER NOT NULL,
        through INTEGER NOT NULL,
        PRIMARY KEY (chain_id, bot_id)
      );
    `
  },
  {
    version: 15,
    name: "fair delivery claims",
    // A claim reads each destination's oldest due deliveries: one index probe per destination.
    sql: `
      CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, status, next_attempt_at);
    `
  },
  {
    version: 16,
    name: "unverified alerts",
    // When a re-anchored follower could no longer find an alert's block on the node.
    sql: `
      ALTER TABLE monitor_alerts ADD COLUMN unverified_at TEXT;
    `
  },
  {
    version: 17,
    name: "pending deliveries by destination",
    // The destinations with pending deliveries, found by skipping from one to the next in this index (only
    // pending rows, so it stays as small as the backlog): a claim no longer reads every pending row.
    sql: `
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
    `
  },
  {
    version: 18,
    name: "outbox indexes of what is read",
    // Every write to the outbox paid for six indexes, three of which only repeated another's columns with the
    // delivered rows (the bulk of the table) in them. What is read by destination is its pending deliveries (the
    // index of migration 17) and its dead-lettered ones (redelivery, stats); delivered rows are only read by id or
    // correlation, so storing or settling a delivery now touches three indexes instead of six.
    sql: `
      DROP INDEX webhook_deliveries_due;
      DROP INDEX webhook_deliveries_by_webhook;
      DROP INDEX webhook_deliveries_due_by_webhook;
      CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (webhook_id) WHERE status = 'dead';
    `
  },
  {
    version: 19,
    name: "follow leases",
    // Who follows each chain when several processes share the file (FollowLeases).
    sql: `
      CREATE TABLE follow_leases (
        chain_id INTEGER PRIMARY KEY,
        holder TEXT NOT NULL,
        term INTEGER NOT NULL,
        expires_at TEXT NOT NULL
      );
    `
  },
  {
    version: 20,
    name: "calibration models",
    // Fitted calibration models, numbered in the order stored; the model itself as JSON.
    sql: `
      CREATE TABLE intel_models (
        version INTEGER PRIMARY KEY,
        as_of TEXT NOT NULL,
        fitted_at TEXT NOT NULL,
        model TEXT NOT NULL
      );
    `
  },
  {
    version: 21,
    name: "refused refreshes",
    // The latest refresh of each list that the guard refused.
    sql: `
      CREATE TABLE intel_refusals (
        list TEXT PRIMARY KEY,
        at TEXT NOT NULL,
        origin TEXT NOT NULL,
        message TEXT NOT NULL
      );
    `
  },
  {
    version: 22,
    name: "list records by the version that wrote them",
    // A commit writes a list's new records a slice at a time, each slice a short transaction, and makes them
    // visible in one short last one: a record is in force when the version that wrote it lies between the list's
    // floor (raised when a version replaces every record: those below it wait to be swept) and its current
    // version. The revision changes with every change of the list's records, so a commit can tell that the list
    // is still as it planned from.
    sql: `
      ALTER TABLE intel_records ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
      UPDATE intel_records SET version = coalesce((SELECT l.version FROM intel_lists l WHERE l.list = intel_records.list), 0);
      ALTER TABLE intel_lists ADD COLUMN floor INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE intel_lists ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX intel_records_by_list_version ON intel_records (list, version);
    `
  },
  {
    version: 23,
    name: "key changes counted",
    // Every change of the keys moves a counter, so a process holding the keys in memory reads them again only
    // when they changed, not at every commit of another connection.
    sql: `
      CREATE TABLE vigil_generations (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
      INSERT INTO vigil_generations (name, n) VALUES ('api_keys', 0);
      CREATE TRIGGER api_keys_inserted AFTER INSERT ON api_keys
        BEGIN UPDATE vigil_generations SET n = n + 1 WHERE name = 'api_keys'; END;
      CREATE TRIGGER api_keys_updated AFTER UPDATE ON api_keys
        BEGIN UPDATE vigil_generations SET n = n + 1 WHERE name = 'api_keys'; END;
      CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
        BEGIN UPDATE vigil_generations SET n = n + 1 WHERE name = 'api_keys'; END;
    `
  },
  {
    version: 24,
    name: "record citations",
    // The source a curated entry says it took the listing from: what ties it to the lists it re-publishes.
    sql: `
      ALTER TABLE intel_records ADD COLUMN cites TEXT;
    `
  },
  {
    version: 25,
    name: "token decimals",
    // What a token contract's decimals() answered when it was registered: how its amounts read in whole units.
    sql: `
      ALTER TABLE monitor_contracts ADD COLUMN decimals INTEGER;
    `
  },
  {
    version: 26,
    name: "delivery outcomes by destination",
    // A destination's last outcome (its last error, or none since a delivery went through) is its latest delivery
    // that failed or went through: found by this index, newest first, where it was found by walking the whole
    // outbox back from its newest row, every delivery of every destination since that one.
    sql: `
      CREATE INDEX webhook_deliveries_outcomes ON webhook_deliveries (webhook_id)
        WHERE last_error IS NOT NULL OR status = 'delivered';
    `
  },
  {
    version: 27,
    name: "retracted alerts by chain",
    // A chain's retracted alerts, counted for every /health and /metrics while the chain is followed: found by
    // this index, where the count read every alert ever stored (measured: 100 ms of a blocked event loop per
    // count over 300,000 alerts, 0.02 ms with the index).
    sql: `
      CREATE INDEX monitor_alerts_retracted ON monitor_alerts (chain_id) WHERE retracted_at IS NOT NULL;
    `
  }
]

/** The outcome of {@link migrate}: the version the database was at, the one it is at now, and what was applied. */
export interface MigrationReport {
  readonly from: number
  readonly to: number
  readonly applied: ReadonlyArray<string>
}

/**
 * Brings the database up to the newest known migration. Reading the version takes no write lock, so opening
 * an up-to-date database never waits for another process's writer. Each pending step runs inside its own
 * immediate transaction that re-reads the version, so two processes opening the same file never apply a step
 * twice. Returns a StoreError with reason `Incompatible` when the file was written by a newer build.
 */
export const migrate = (
  db: Database.Database,
  list: ReadonlyArray<Migration>,
  appliedAt: string
): MigrationReport | StoreError.StoreError => {
  const currentVersion = (): number => {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vigil_migrations'").get()
    if (table === undefined) return 0
    return (db.prepare("SELECT coalesce(max(version), 0) AS v FROM vigil_migrations").get() as { v: number }).v
  }
  const latest = list.at(-1)?.version ?? 0
  const from = currentVersion()
  if (from > latest) {
    return new StoreError.StoreError({
      reason: "Incompatible",
      operation: "migrate",
      message: `the database is at schema version ${from}, newer than this build knows (${latest}); upgrade Vigil`
    })
  }
  const applied: Array<string> = []
  for (const step of list) {
    if (step.version <= from) continue
    db.transaction(() => {
      if (currentVersion() >= step.version) return
      db.exec(`CREATE TABLE IF NOT EXISTS vigil_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`)
      db.exec(step.sql)
      db.prepare("INSERT INTO vigil_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        step.version,
        step.name,
        appliedAt
      )
      applied.push(step.name)
    }).immediate()
  }
  return { from, to: applied.length === 0 ? from : currentVersion(), applied }
}
