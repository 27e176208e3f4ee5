/**
 * The schema, one migration per step, keyed `<id>_<name>` for the migrator; a released step is never edited,
 * only followed. Instants are kept as ISO 8601 text, as the ports exchange them; counters and epoch milliseconds
 * as `bigint`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Runs each statement of `text` (separated by blank-line-free `;` ends) in order. */
const statements = (text: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const statement of text
      .split(/;\s*\n/)
      .map((s) => s.trim())
      .filter((s) => s !== ""))
      yield* sql.unsafe(statement)
  })

export const migrations = {
  "1_keys_and_quotas": statements(`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      name text NOT NULL,
      hash text NOT NULL,
      qps integer NOT NULL,
      daily integer NOT NULL,
      monthly integer NOT NULL,
      created_at text NOT NULL,
      expires_at text,
      revoked_at text,
      seq bigserial NOT NULL
    );
    CREATE TABLE quota_windows (
      key text NOT NULL,
      window_start bigint NOT NULL,
      window_end bigint NOT NULL,
      used bigint NOT NULL,
      PRIMARY KEY (key, window_start)
    );
    CREATE INDEX quota_windows_by_end ON quota_windows (window_end);
  `),
  "2_health": statements(`
    CREATE TABLE vigil_health (
      instance text PRIMARY KEY,
      checked_at text NOT NULL
    );
  `),
  "3_monitor_contracts_and_bots": statements(`
    CREATE TABLE monitor_contracts (
      id text PRIMARY KEY,
      key_id text NOT NULL,
      chain_id integer NOT NULL,
      address text NOT NULL,
      label text NOT NULL,
      abi text NOT NULL,
      abi_source text NOT NULL,
      proxy_implementation text,
      created text NOT NULL,
      seq bigserial NOT NULL,
      UNIQUE (key_id, chain_id, label)
    );
    CREATE INDEX monitor_contracts_by_key ON monitor_contracts (key_id, chain_id, created);
    CREATE TABLE monitor_bots (
      id text PRIMARY KEY,
      key_id text NOT NULL,
      chain_id integer NOT NULL,
      revision integer NOT NULL,
      active boolean NOT NULL,
      created text NOT NULL,
      body text NOT NULL,
      seq bigserial NOT NULL
    );
    CREATE INDEX monitor_bots_by_key ON monitor_bots (key_id, chain_id, created);
    CREATE INDEX monitor_bots_active ON monitor_bots (chain_id, created) WHERE active;
  `),
  "4_monitor_blocks": statements(`
    CREATE TABLE monitor_blocks (
      chain_id integer NOT NULL,
      number bigint NOT NULL,
      hash text NOT NULL,
      traces boolean NOT NULL,
      data text NOT NULL,
      PRIMARY KEY (chain_id, number)
    );
    CREATE TABLE monitor_bot_blocks (
      bot_id text NOT NULL,
      number bigint NOT NULL,
      PRIMARY KEY (bot_id, number)
    );
  `),
  "5_webhooks_and_outbox": statements(`
    CREATE TABLE webhooks (
      id text PRIMARY KEY,
      key_id text NOT NULL,
      url text NOT NULL,
      secret text NOT NULL,
      created text NOT NULL,
      delivery_count bigint NOT NULL DEFAULT 0,
      last_delivery text,
      disabled_at text,
      channel text,
      seq bigserial NOT NULL
    );
    CREATE INDEX webhooks_by_key ON webhooks (key_id, created, seq);
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      webhook_id text NOT NULL,
      key_id text NOT NULL,
      correlation_id text NOT NULL,
      body text NOT NULL,
      attempts integer NOT NULL,
      next_attempt_at bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
      last_error text,
      seq bigserial NOT NULL
    );
    CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, next_attempt_at, seq)
      WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, status);
    CREATE INDEX webhook_deliveries_by_correlation ON webhook_deliveries (correlation_id);
  `),
  "6_following": statements(`
    CREATE TABLE follow_cursors (
      chain_id integer PRIMARY KEY,
      number bigint NOT NULL,
      hash text NOT NULL,
      parent_hash text NOT NULL
    );
    CREATE TABLE follow_marks (
      chain_id integer NOT NULL,
      number bigint NOT NULL,
      hash text NOT NULL,
      parent_hash text NOT NULL,
      PRIMARY KEY (chain_id, number)
    );
    CREATE TABLE follow_coverage (
      chain_id integer NOT NULL,
      bot_id text NOT NULL,
      from_block bigint NOT NULL,
      through bigint NOT NULL,
      PRIMARY KEY (chain_id, bot_id)
    );
    CREATE TABLE monitor_alerts (
      id text PRIMARY KEY,
      key_id text NOT NULL,
      bot_id text NOT NULL,
      chain_id integer NOT NULL,
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      block_time bigint NOT NULL,
      rule integer NOT NULL,
      expression text NOT NULL,
      transactions text NOT NULL,
      evidence text NOT NULL,
      created text NOT NULL,
      retracted_at text,
      unverified_at text,
      suppressed text,
      seq bigserial NOT NULL
    );
    CREATE INDEX monitor_alerts_by_bot ON monitor_alerts (key_id, bot_id, seq);
    CREATE INDEX monitor_alerts_live ON monitor_alerts (chain_id, block_number) WHERE retracted_at IS NULL;
    CREATE INDEX monitor_alerts_by_bot_time ON monitor_alerts (bot_id, block_time) WHERE retracted_at IS NULL;
  `),
  "7_intelligence": statements(`
    CREATE TABLE intel_versions (
      id bigserial PRIMARY KEY,
      list text NOT NULL,
      source text NOT NULL,
      kind text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('snapshot', 'history')),
      as_of text NOT NULL,
      content_hash text NOT NULL,
      origin text NOT NULL,
      ingested_at text NOT NULL,
      state text NOT NULL CHECK (state IN ('staged', 'committed')),
      authority text NOT NULL CHECK (authority IN ('official', 'curated', 'scraped')),
      withdrawn_at text
    );
    CREATE INDEX intel_versions_by_list ON intel_versions (list, state);
    CREATE TABLE intel_staged (
      version bigint NOT NULL REFERENCES intel_versions (id) ON DELETE CASCADE,
      record text NOT NULL,
      seq bigserial NOT NULL
    );
    CREATE INDEX intel_staged_by_version ON intel_staged (version, seq);
    CREATE TABLE intel_records (
      id bigserial PRIMARY KEY,
      list text NOT NULL,
      source text NOT NULL,
      address text NOT NULL,
      family text NOT NULL,
      category text NOT NULL,
      reference text NOT NULL,
      jurisdiction text,
      entity_name text,
      entity_type text,
      label text,
      listed_at text NOT NULL,
      delisted_at text,
      ingested_at text NOT NULL
    );
    CREATE INDEX intel_records_by_address ON intel_records (address);
    CREATE INDEX intel_records_by_list ON intel_records (list, delisted_at);
    CREATE TABLE intel_lists (
      list text PRIMARY KEY,
      version bigint NOT NULL REFERENCES intel_versions (id)
    );
    CREATE TABLE intel_deletions (
      id bigserial PRIMARY KEY,
      list text NOT NULL,
      version integer NOT NULL,
      records integer NOT NULL,
      deleted_at text NOT NULL
    );
    CREATE TABLE intel_amendments (
      id bigserial PRIMARY KEY,
      list text NOT NULL,
      action text NOT NULL CHECK (action IN ('rollback', 'redate')),
      version integer NOT NULL,
      detail text NOT NULL,
      at text NOT NULL
    );
  `),
  "8_follow_leases": statements(`
    CREATE TABLE follow_leases (
      chain_id bigint PRIMARY KEY,
      holder text NOT NULL,
      term bigint NOT NULL,
      expires_at timestamptz NOT NULL
    );
  `),
  // Which instance holds a delivery's lease and until when (its clock, in ms), so that a claim counts what the
  // other instances have in flight per key and destination; a settlement that leaves it pending clears it.
  "9_outbox_lease_holders": statements(`
    ALTER TABLE webhook_deliveries ADD COLUMN leased_by text, ADD COLUMN leased_until bigint;
    CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (key_id)
      WHERE status = 'pending' AND leased_by IS NOT NULL;
  `),
  // Fitted calibration models, numbered in the order stored; the model itself as JSON.
  "10_calibration_models": statements(`
    CREATE TABLE intel_models (
      version bigserial PRIMARY KEY,
      as_of text NOT NULL,
      fitted_at text NOT NULL,
      model text NOT NULL
    );
  `),
  // The latest refresh of each list that the guard refused.
  "11_refused_refreshes": statements(`
    CREATE TABLE intel_refusals (
      list text PRIMARY KEY,
      at text NOT NULL,
      origin text NOT NULL,
      message text NOT NULL
    );
  `),
  // A batch of quota charges decided in one statement (one round trip instead of five): the windows created if
  // missing and locked in (key, start) order, each charge decided all-or-nothing in arrival order against the
  // counts the earlier ones left (QuotaStore.decide), each window written once. Rows of one charge are contiguous;
  // limits are doubles, so a window without one is Infinity.
  "12_quota_charge_function": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`
      CREATE FUNCTION vigil_charge(
        charge_of int[], costs bigint[], keys text[], starts bigint[], ends bigint[], limits float8[]
      ) RETURNS TABLE (used bigint, granted boolean) LANGUAGE plpgsql AS $fn$
      DECLARE
        n int := coalesce(array_length(keys, 1), 0);
        wkeys text[] := '{}';
        wstarts bigint[] := '{}';
        wused bigint[] := '{}';
        slot int[] := '{}';
        out_used bigint[] := '{}';
        out_granted boolean[] := '{}';
        r record;
        i int := 1;
        j int;
        w int;
        first int;
        ok boolean;
      BEGIN
        INSERT INTO quota_windows (key, window_start, window_end, used)
          SELECT DISTINCT t.k, t.s, t.e, 0::bigint FROM unnest(keys, starts, ends) AS t(k, s, e)
          ORDER BY 1, 2
          ON CONFLICT (key, window_start) DO NOTHING;
        FOR r IN
          SELECT q.key, q.window_start, q.used FROM quota_windows q
          JOIN (SELECT DISTINCT t.k, t.s FROM unnest(keys, starts) AS t(k, s)) t
            ON q.key = t.k AND q.window_start = t.s
          ORDER BY q.key, q.window_start
          FOR UPDATE OF q
        LOOP
          wkeys := wkeys || r.key;
          wstarts := wstarts || r.window_start;
          wused := wused || r.used;
        END LOOP;
        FOR j IN 1..n LOOP
          FOR w IN 1..coalesce(array_length(wkeys, 1), 0) LOOP
            IF wkeys[w] = keys[j] AND wstarts[w] = starts[j] THEN
              slot[j] := w;
            END IF;
          END LOOP;
        END LOOP;
        WHILE i <= n LOOP
          first := i;
          ok := true;
          WHILE i <= n AND charge_of[i] = charge_of[first] LOOP
            IF wused[slot[i]] + costs[i] > limits[i] THEN
              ok := false;
            END IF;
            i := i + 1;
          END LOOP;
          FOR j IN first..i - 1 LOOP
            IF ok THEN
              wused[slot[j]] := wused[slot[j]] + costs[j];
            END IF;
            out_used[j] := wused[slot[j]];
            out_granted[j] := ok;
          END LOOP;
        END LOOP;
        UPDATE quota_windows q SET used = t.u
          FROM unnest(wkeys, wstarts, wused) AS t(k, s, u)
          WHERE q.key = t.k AND q.window_start = t.s AND q.used <> t.u;
        RETURN QUERY SELECT t.u, t.g FROM unnest(out_used, out_granted) WITH ORDINALITY AS t(u, g, o) ORDER BY t.o;
      END
      $fn$`)
  ),
  // What a claim reads, in one round trip instead of five: the deliveries sent since the last claim settled (each
  // only for its attempt and while pending, each destination counted once), each due destination's `each` oldest
  // due deliveries locked or skipped (FOR UPDATE SKIP LOCKED) in the order a claim considers them, then the
  // advisory locks of their keys in key order, and only then (a statement of its own, so a fresh snapshot) what
  // the other instances hold in flight for those keys. The caller picks (WebhookStore.fairPick) and leases in
  // the same transaction, reading the bodies of what it leases only.
  "13_outbox_claim_function": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`
      CREATE FUNCTION vigil_claim_read(
        sent_ids text[], sent_attempts int[], sent_at text[], due_at bigint, each_limit int, holder text
      ) RETURNS json LANGUAGE plpgsql AS $fn$
      DECLARE
        ids text[];
        found json;
        key_ids text[];
        k text;
        held json;
      BEGIN
        IF coalesce(array_length(sent_ids, 1), 0) > 0 THEN
          WITH done AS (
            UPDATE webhook_deliveries d SET status = 'delivered'
            FROM unnest(sent_ids, sent_attempts, sent_at) AS t(id, attempt, at)
            WHERE d.id = t.id AND d.attempts = t.attempt AND d.status = 'pending'
            RETURNING d.webhook_id, t.at
          ), counted AS (SELECT webhook_id, count(*) AS n, max(at) AS at FROM done GROUP BY webhook_id)
          UPDATE webhooks w SET delivery_count = w.delivery_count + c.n, last_delivery = c.at
          FROM counted c WHERE w.id = c.webhook_id;
        END IF;
        -- The destinations with pending deliveries, found by skipping from one to the next in the index of pending
        -- rows, then each one's oldest due deliveries by an index probe: a few rows per destination, never the
        -- whole backlog.
        WITH RECURSIVE destinations(webhook_id) AS (
          (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
          UNION ALL
          SELECT (SELECT d.webhook_id FROM webhook_deliveries d
                  WHERE d.status = 'pending' AND d.webhook_id > destinations.webhook_id
                  ORDER BY d.webhook_id LIMIT 1)
          FROM destinations WHERE destinations.webhook_id IS NOT NULL
        )
        SELECT array_agg(due.id ORDER BY due.rn) INTO ids FROM (
          SELECT x.id, row_number() OVER (ORDER BY x.first, x.webhook_id, x.next_attempt_at, x.seq) AS rn
          FROM (
            SELECT y.id, y.webhook_id, y.next_attempt_at, y.seq,
                   min(y.next_attempt_at) OVER (PARTITION BY y.webhook_id) AS first
            FROM destinations
            JOIN webhooks w ON w.id = destinations.webhook_id AND w.disabled_at IS NULL
            CROSS JOIN LATERAL (
              SELECT d.id, d.webhook_id, d.next_attempt_at, d.seq FROM webhook_deliveries d
              WHERE d.webhook_id = destinations.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= due_at
              ORDER BY d.next_attempt_at, d.seq LIMIT each_limit
            ) y
          ) x
          ORDER BY rn LIMIT 4096
        ) due;
        IF ids IS NULL THEN
          RETURN json_build_object('rows', '[]'::json, 'held', '[]'::json);
        END IF;
        -- Another instance's claim holds some of them: those are skipped, not waited for.
        SELECT json_agg(c ORDER BY array_position(ids, c.id)), array_agg(DISTINCT c.key_id)
          INTO found, key_ids
        FROM (
          SELECT d.id, d.webhook_id, d.key_id, d.correlation_id, d.attempts, d.next_attempt_at, d.status, d.last_error,
                 (SELECT row_to_json(x)::text FROM (
                    SELECT id, key_id, url, secret, created, delivery_count::int AS delivery_count, last_delivery,
                           disabled_at, channel
                    FROM webhooks WHERE id = d.webhook_id) x) AS w
          FROM webhook_deliveries d
          WHERE d.id = ANY(ids) AND d.status = 'pending' AND d.next_attempt_at <= due_at
          FOR UPDATE OF d SKIP LOCKED
        ) c;
        IF found IS NULL THEN
          RETURN json_build_object('rows', '[]'::json, 'held', '[]'::json);
        END IF;
        FOREACH k IN ARRAY (SELECT array_agg(u ORDER BY u) FROM unnest(key_ids) AS u) LOOP
          PERFORM pg_advisory_xact_lock(hashtext('outbox:' || k));
        END LOOP;
        SELECT coalesce(json_agg(h), '[]'::json) INTO held FROM (
          SELECT key_id, webhook_id, count(*)::int AS n FROM webhook_deliveries
          WHERE status = 'pending' AND leased_by IS NOT NULL AND leased_by <> holder
            AND leased_until > due_at AND key_id = ANY(key_ids)
          GROUP BY key_id, webhook_id
        ) h;
        RETURN json_build_object('rows', found, 'held', held);
      END
      $fn$`)
  ),
  // The source a curated entry says it took the listing from: what ties it to the lists it re-publishes.
  "14_record_citations": statements(`
    ALTER TABLE intel_records ADD COLUMN cites text
  `),
  // What a token contract's decimals() answered when it was registered: how its amounts read in whole units.
  "15_token_decimals": statements(`
    ALTER TABLE monitor_contracts ADD COLUMN decimals integer
  `)
}
