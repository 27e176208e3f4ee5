/**
 * The schema, one migration per step, keyed `<id>_<name>` for the migrator; a released step is never edited,
 * only followed. Instants are kept as ISO 8601 text, as the ports exchange them; counters and epoch milliseconds
 * as `bigint`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Migration 16's vigil_claim, as released. */
const claimWhole = `
      CREATE FUNCTION vigil_claim(
        sent_ids text[], sent_attempts int[], sent_at text[], due_at bigint, each_limit int, holder text,
        pick_limit int, per_key int, per_destination int, mine_keys text[], mine_key_n int[],
        mine_destinations text[], mine_destination_n int[], lease_until bigint
      ) RETURNS json LANGUAGE plpgsql AS $fn$
      DECLARE
        ids text[];
        c_id text[];
        c_key text[];
        c_webhook text[];
        key_ids text[];
        k_id text;
        h_key text[];
        h_webhook text[];
        h_n int[];
        c_destination int[];
        c_next int[];
        cn int;
        k_name text[] := '{}';
        k_count int[] := '{}';
        k_turn int[];
        k_len int[];
        k_offset int[];
        k_fill int[];
        d_name text[] := '{}';
        d_key int[] := '{}';
        d_head int[] := '{}';
        d_tail int[] := '{}';
        d_busy int[] := '{}';
        key_destinations int[];
        nk int;
        nd int;
        i int;
        j int;
        k int;
        d int;
        held int;
        progress boolean;
        picked int[] := '{}';
        np int := 0;
        picked_ids text[];
        answer json;
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
        IF pick_limit <= 0 OR each_limit <= 0 THEN
          RETURN '[]'::json;
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
          RETURN '[]'::json;
        END IF;
        -- Another instance's claim holds some of them: those are skipped, not waited for.
        SELECT array_agg(c.id ORDER BY array_position(ids, c.id)), array_agg(c.key_id ORDER BY array_position(ids, c.id)),
               array_agg(c.webhook_id ORDER BY array_position(ids, c.id)), array_agg(DISTINCT c.key_id)
          INTO c_id, c_key, c_webhook, key_ids
        FROM (
          SELECT d.id, d.webhook_id, d.key_id FROM webhook_deliveries d
          WHERE d.id = ANY(ids) AND d.status = 'pending' AND d.next_attempt_at <= due_at
          FOR UPDATE OF d SKIP LOCKED
        ) c;
        IF c_id IS NULL THEN
          RETURN '[]'::json;
        END IF;
        FOREACH k_id IN ARRAY (SELECT array_agg(u ORDER BY u) FROM unnest(key_ids) AS u) LOOP
          PERFORM pg_advisory_xact_lock(hashtext('outbox:' || k_id));
        END LOOP;
        SELECT array_agg(key_id), array_agg(webhook_id), array_agg(n) INTO h_key, h_webhook, h_n FROM (
          SELECT key_id, webhook_id, count(*)::int AS n FROM webhook_deliveries
          WHERE status = 'pending' AND leased_by IS NOT NULL AND leased_by <> holder
            AND leased_until > due_at AND key_id = ANY(key_ids)
          GROUP BY key_id, webhook_id
        ) h;
        -- Keys numbered in the order of their first candidate, and destinations (a key's webhook) in the order of
        -- theirs; a destination's candidates chained in their order (its queue). They come together (ordered by
        -- destination), so a candidate of the previous one's destination is found without a search.
        cn := array_length(c_id, 1);
        nk := 0;
        nd := 0;
        c_destination := array_fill(0, ARRAY[cn]);
        c_next := array_fill(NULL::int, ARRAY[cn]);
        FOR i IN 1..cn LOOP
          IF i > 1 AND c_webhook[i] = c_webhook[i - 1] AND c_key[i] = c_key[i - 1] THEN
            d := c_destination[i - 1];
          ELSE
            d := array_position(d_name, c_webhook[i]);
            WHILE d IS NOT NULL AND k_name[d_key[d]] <> c_key[i] LOOP
              d := array_position(d_name, c_webhook[i], d + 1);
            END LOOP;
          END IF;
          IF d IS NULL THEN
            k := array_position(k_name, c_key[i]);
            IF k IS NULL THEN
              nk := nk + 1;
              k := nk;
              k_name[k] := c_key[i];
              k_count[k] := coalesce(mine_key_n[array_position(mine_keys, c_key[i])], 0);
            END IF;
            nd := nd + 1;
            d := nd;
            d_name[d] := c_webhook[i];
            d_key[d] := k;
            d_busy[d] := coalesce(mine_destination_n[array_position(mine_destinations, c_webhook[i])], 0);
            d_head[d] := i;
          ELSE
            c_next[d_tail[d]] := i;
          END IF;
          c_destination[i] := d;
          d_tail[d] := i;
        END LOOP;
        -- What the other instances hold in flight, added: per key, and per destination by its webhook.
        FOR j IN 1..coalesce(array_length(h_key, 1), 0) LOOP
          k := array_position(k_name, h_key[j]);
          IF k IS NOT NULL THEN
            k_count[k] := k_count[k] + h_n[j];
          END IF;
          d := array_position(d_name, h_webhook[j]);
          WHILE d IS NOT NULL LOOP
            d_busy[d] := d_busy[d] + h_n[j];
            d := array_position(d_name, h_webhook[j], d + 1);
          END LOOP;
        END LOOP;
        -- Each key's destinations in one array, from k_offset[k] + 1, in the order of their first candidate.
        k_turn := array_fill(0, ARRAY[nk]);
        k_len := array_fill(0, ARRAY[nk]);
        k_offset := array_fill(0, ARRAY[nk]);
        k_fill := array_fill(0, ARRAY[nk]);
        FOR d IN 1..nd LOOP
          k_len[d_key[d]] := k_len[d_key[d]] + 1;
        END LOOP;
        j := 0;
        FOR k IN 1..nk LOOP
          k_offset[k] := j;
          j := j + k_len[k];
        END LOOP;
        key_destinations := array_fill(0, ARRAY[nd]);
        FOR d IN 1..nd LOOP
          k := d_key[d];
          k_fill[k] := k_fill[k] + 1;
          key_destinations[k_offset[k] + k_fill[k]] := d;
        END LOOP;
        -- In rounds, each key in turn takes one delivery of its next destination in turn that may take one.
        progress := true;
        WHILE progress AND np < pick_limit LOOP
          progress := false;
          FOR k IN 1..nk LOOP
            EXIT WHEN np >= pick_limit;
            held := k_count[k];
            CONTINUE WHEN held >= per_key;
            FOR j IN 0..k_len[k] - 1 LOOP
              d := key_destinations[k_offset[k] + 1 + (k_turn[k] + j) % k_len[k]];
              IF d_head[d] IS NOT NULL AND d_busy[d] < per_destination THEN
                np := np + 1;
                picked[np] := d_head[d];
                d_head[d] := c_next[d_head[d]];
                k_count[k] := held + 1;
                d_busy[d] := d_busy[d] + 1;
                k_turn[k] := (k_turn[k] + j + 1) % k_len[k];
                progress := true;
                EXIT;
              END IF;
            END LOOP;
          END LOOP;
        END LOOP;
        IF np = 0 THEN
          RETURN '[]'::json;
        END IF;
        SELECT array_agg(c_id[p] ORDER BY o) INTO picked_ids FROM unnest(picked) WITH ORDINALITY AS t(p, o);
        WITH leased AS (
          UPDATE webhook_deliveries
          SET attempts = attempts + 1, next_attempt_at = lease_until, leased_by = holder, leased_until = lease_until
          WHERE id = ANY(picked_ids)
          RETURNING id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, status, last_error
        )
        SELECT json_agg(json_build_object(
                 'id', l.id, 'webhook_id', l.webhook_id, 'key_id', l.key_id, 'correlation_id', l.correlation_id,
                 'body', l.body, 'attempts', l.attempts, 'next_attempt_at', l.next_attempt_at, 'status', l.status,
                 'last_error', l.last_error,
                 'w', json_build_object('id', w.id, 'key_id', w.key_id, 'url', w.url, 'secret', w.secret,
                                        'created', w.created, 'delivery_count', w.delivery_count::int,
                                        'last_delivery', w.last_delivery, 'disabled_at', w.disabled_at,
                                        'channel', w.channel))
               ORDER BY array_position(picked_ids, l.id)) INTO answer
        FROM leased l JOIN webhooks w ON w.id = l.webhook_id;
        RETURN coalesce(answer, '[]'::json);
      END
      $fn$`

/**
 * The one statement of vigil_claim that migration 20 changes: how the candidates are locked, with the conditions
 * in the locking scan (16), and by the primary key alone behind a fence, the conditions applied after (20).
 */
const lockedBefore = `        FROM (
          SELECT d.id, d.webhook_id, d.key_id FROM webhook_deliveries d
          WHERE d.id = ANY(ids) AND d.status = 'pending' AND d.next_attempt_at <= due_at
          FOR UPDATE OF d SKIP LOCKED
        ) c;`
const lockedAfter = `        FROM (
          SELECT d.id, d.webhook_id, d.key_id, d.status, d.next_attempt_at FROM webhook_deliveries d
          WHERE d.id = ANY(ids)
          OFFSET 0
          FOR UPDATE OF d SKIP LOCKED
        ) c
        WHERE c.status = 'pending' AND c.next_attempt_at <= due_at;`

/**
 * A released function `name` of `released` made again (`CREATE OR REPLACE`) with its one statement `before` swapped
 * for `after`; the module fails at load if `released` no longer holds `before` exactly once.
 */
const revised = (released: string, name: string, before: string, after: string) => {
  const [head, tail, ...more] = released.split(before)
  if (tail === undefined || more.length > 0)
    throw new Error(`the released ${name} no longer holds the text a revision changes`)
  return `${head!.replace(`CREATE FUNCTION ${name}(`, `CREATE OR REPLACE FUNCTION ${name}(`)}${after}${tail}`
}

/** Migration 20's vigil_claim: migration 16's with its candidates locked by the primary key (see there). */
const claimByKey = revised(claimWhole, "vigil_claim", lockedBefore, lockedAfter)

/**
 * The statement of vigil_claim that migration 24 changes: how the destinations with pending deliveries are found,
 * each the first pending row after the last one found, ordered by webhook alone (16) or in the order of the index
 * of pending deliveries (24).
 */
const probedBefore = `          (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
          UNION ALL
          SELECT (SELECT d.webhook_id FROM webhook_deliveries d
                  WHERE d.status = 'pending' AND d.webhook_id > destinations.webhook_id
                  ORDER BY d.webhook_id LIMIT 1)`
const probedAfter = `          (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending'
           ORDER BY webhook_id, next_attempt_at, seq LIMIT 1)
          UNION ALL
          SELECT (SELECT d.webhook_id FROM webhook_deliveries d
                  WHERE d.status = 'pending' AND d.webhook_id > destinations.webhook_id
                  ORDER BY d.webhook_id, d.next_attempt_at, d.seq LIMIT 1)`

/** Migration 24's vigil_claim: migration 20's with its destinations found in the index of pending ones (see there). */
const claimByPending = revised(claimByKey, "vigil_claim", probedBefore, probedAfter)

/** Migration 18's vigil_advance, as released. */
const advanceWhole = `
      CREATE FUNCTION vigil_advance(
        chain integer, expected_number bigint, expected_hash text,
        mark_numbers bigint[], mark_hashes text[], mark_parents text[],
        alert_ids text[], alert_keys text[], alert_bots text[], alert_chains int[], alert_numbers bigint[],
        alert_hashes text[], alert_times bigint[], alert_rules int[], alert_expressions text[],
        alert_transactions text[], alert_evidence text[], alert_created text[], alert_suppressed text[],
        delivery_ids text[], delivery_webhooks text[], delivery_keys text[], delivery_correlations text[],
        delivery_bodies text[], delivery_attempts int[], delivery_due bigint[],
        coverage_bots text[], coverage_from bigint[], coverage_through bigint[], keep_marks bigint
      ) RETURNS text[] LANGUAGE plpgsql AS $fn$
      DECLARE
        at_number bigint;
        at_hash text;
        stored text[];
        last_mark int := coalesce(array_length(mark_numbers, 1), 0);
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('follow:' || chain));
        SELECT number, hash INTO at_number, at_hash FROM follow_cursors WHERE chain_id = chain;
        IF at_number IS NULL THEN
          IF expected_number IS NOT NULL THEN
            RETURN NULL;
          END IF;
        ELSIF expected_number IS NULL OR at_number <> expected_number OR at_hash <> expected_hash THEN
          RETURN NULL;
        END IF;
        IF last_mark > 0 THEN
          INSERT INTO follow_marks (chain_id, number, hash, parent_hash)
          SELECT chain, t.n, t.h, t.p FROM unnest(mark_numbers, mark_hashes, mark_parents) AS t(n, h, p)
          ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash;
        END IF;
        IF coalesce(array_length(alert_ids, 1), 0) > 0 THEN
          WITH inserted AS (
            INSERT INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule,
              expression, transactions, evidence, created, suppressed)
            SELECT id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule, expression,
                   transactions, evidence, created, NULLIF(suppressed, '')
            FROM unnest(alert_ids, alert_keys, alert_bots, alert_chains, alert_numbers, alert_hashes, alert_times,
                        alert_rules, alert_expressions, alert_transactions, alert_evidence, alert_created,
                        alert_suppressed)
                 WITH ORDINALITY AS t(id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule,
                   expression, transactions, evidence, created, suppressed, position)
            ORDER BY position
            ON CONFLICT (id) DO NOTHING RETURNING id
          )
          SELECT array_agg(id) INTO stored FROM inserted;
        END IF;
        IF stored IS NOT NULL AND coalesce(array_length(delivery_ids, 1), 0) > 0 THEN
          INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, status)
          SELECT t.id, t.webhook_id, t.key_id, t.correlation_id, t.body, t.attempts, t.next_attempt_at, 'pending'
          FROM unnest(delivery_ids, delivery_webhooks, delivery_keys, delivery_correlations, delivery_bodies,
                      delivery_attempts, delivery_due)
               AS t(id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at)
          WHERE t.correlation_id = ANY(stored)
            AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = t.webhook_id AND w.disabled_at IS NULL);
        END IF;
        IF coalesce(array_length(coverage_bots, 1), 0) > 0 THEN
          INSERT INTO follow_coverage (chain_id, bot_id, from_block, through)
          SELECT chain, t.bot_id, t.from_block, t.through
          FROM unnest(coverage_bots, coverage_from, coverage_through) AS t(bot_id, from_block, through)
          ON CONFLICT (chain_id, bot_id) DO UPDATE SET from_block = excluded.from_block, through = excluded.through;
        END IF;
        IF last_mark > 0 THEN
          INSERT INTO follow_cursors (chain_id, number, hash, parent_hash)
          VALUES (chain, mark_numbers[last_mark], mark_hashes[last_mark], mark_parents[last_mark])
          ON CONFLICT (chain_id) DO UPDATE
            SET number = excluded.number, hash = excluded.hash, parent_hash = excluded.parent_hash;
          DELETE FROM follow_marks WHERE chain_id = chain AND number < mark_numbers[last_mark] - keep_marks;
        END IF;
        RETURN coalesce(stored, '{}');
      END
      $fn$`

/** How migration 18's vigil_advance keeps the deliveries of the alerts it stored. */
const keptBefore = `
          FROM unnest(delivery_ids, delivery_webhooks, delivery_keys, delivery_correlations, delivery_bodies,
                      delivery_attempts, delivery_due)
               AS t(id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at)
          WHERE t.correlation_id = ANY(stored)
            AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = t.webhook_id AND w.disabled_at IS NULL);`
/**
 * The same deliveries, in the same order, found by a join on the alerts stored: each delivery looked up in a hash
 * of them rather than compared with every one (4,116 deliveries against 4,116 alerts: 240 ms, against 18 ms).
 */
const keptAfter = `
          FROM unnest(delivery_ids, delivery_webhooks, delivery_keys, delivery_correlations, delivery_bodies,
                      delivery_attempts, delivery_due)
               WITH ORDINALITY AS t(id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, position)
          JOIN unnest(stored) AS s(id) ON s.id = t.correlation_id
          WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = t.webhook_id AND w.disabled_at IS NULL)
          ORDER BY t.position;`

/** Migration 22's vigil_advance: migration 18's with the deliveries of the alerts stored found by a join. */
const advanceJoined = revised(advanceWhole, "vigil_advance", keptBefore, keptAfter)

/** Migration 12's vigil_charge, as released. */
const chargeWhole = `
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
      $fn$`

/**
 * Migration 21's vigil_charge: migration 12's with the transaction it runs in committed without waiting for the
 * write-ahead log to reach the disk (`synchronous_commit` off for that transaction alone; see there).
 */
const chargeUnflushed = revised(
  chargeWhole,
  "vigil_charge",
  "      BEGIN\n",
  "      BEGIN\n        PERFORM set_config('synchronous_commit', 'off', true);\n"
)

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
  "12_quota_charge_function": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(chargeWhole)),
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
  `),
  // A whole claim in one statement (its own transaction when the caller has none), one round trip instead of four
  // (begin, read, lease, commit). What vigil_claim_read did: the deliveries sent since the last claim settled, each
  // due destination's `each_limit` oldest due deliveries locked or skipped (FOR UPDATE SKIP LOCKED) in the order a
  // claim considers them, the advisory locks of their keys in key order, and only then (a statement of its own, so
  // a fresh snapshot) what the other instances hold in flight for those keys. Then WebhookStore.fairPick's rule over
  // those candidates (the same rounds: keys in the order of their first candidate, each key's destinations in turn,
  // a key at most `per_key` and a destination at most `per_destination` in flight, counting this instance's own,
  // `mine_*`, and the others' leases), then the leases of the picked, written before any lock is let go. Answers
  // the leased in the order picked, each with its body and its destination's row.
  "16_outbox_claim_whole": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(claimWhole)),
  // Claims call vigil_claim, which reads as vigil_claim_read did: the older function goes.
  "17_outbox_claim_read_dropped": statements(`
    DROP FUNCTION vigil_claim_read(text[], int[], text[], bigint, int, text)
  `),
  // A follower's step stored in one statement (its own transaction), one round trip instead of ten: the chain's
  // lock, then (a statement of its own, so a fresh snapshot) its cursor checked against the one the step was read
  // from, then the blocks' marks, the alerts (one already stored is left as it is), the deliveries of the alerts
  // stored now (to destinations still enabled), how far each bot was run, the cursor, and the marks older than
  // the kept window gone. Answers the ids of the alerts stored now, or NULL when the cursor had moved (nothing
  // stored).
  "18_follow_advance_function": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(advanceWhole)),
  // The storage probe of /health in one statement, one round trip instead of five: this instance's row written
  // under a short lock timeout of the function's own (another writer's lock answers "busy" at once, not at the
  // statement timeout), then the schema version read.
  "19_health_probe_function": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`
      CREATE FUNCTION vigil_probe(probing text, at text) RETURNS integer
      LANGUAGE sql SET lock_timeout = '1s' AS $fn$
        INSERT INTO vigil_health (instance, checked_at) VALUES (probing, at)
          ON CONFLICT (instance) DO UPDATE SET checked_at = excluded.checked_at;
        SELECT coalesce(max(migration_id), 0)::int FROM vigil_migrations;
      $fn$`)
  ),
  // vigil_claim as migration 16 made it, but for how it locks the candidates: by the primary key alone, then kept
  // while still pending and due. With the conditions in the scan, the planner, working from statistics taken before
  // a burst (when few deliveries were pending), read the whole index of pending deliveries (every delivery of the
  // backlog, at every claim) and kept the candidates from it: a claim grew with the backlog, the slower the fuller
  // the outbox. The fence (OFFSET 0) keeps the conditions out of the scan. A candidate another instance leased or
  // settled meanwhile is locked by its new version and left out.
  "20_outbox_claim_by_key": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(claimByKey)),
  // vigil_charge as migration 12 made it, but committing without waiting for the write-ahead log's flush: every
  // authenticated request waited for the disk at its charge's commit, where SQLite (WAL, synchronous NORMAL) waits
  // for none. The guarantee is then SQLite's: a charge survives Vigil's own crash, while a crash of PostgreSQL or of
  // its machine may forget the last fraction of a second of charges (a few requests more than a limit let through,
  // never a count corrupted). The setting is the charge's transaction's alone (QuotaStore runs every charge in a
  // transaction of its own); every other write still waits for the flush.
  "21_quota_charge_unflushed": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(chargeUnflushed)),
  // vigil_advance as migration 18 made it, but for how it keeps the deliveries of the alerts it stored: it compared
  // each delivery's alert with every alert stored (ANY of an array is a scan of it), a step of thousands of alerts
  // taking a quarter of a second over that alone; a join on them hashes them instead. The deliveries are inserted
  // in the order given, as before.
  "22_follow_advance_joined": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(advanceJoined)),
  // The outbox vacuumed after every 5,000 rows changed, not after a fifth of the table: each delivery writes its row
  // three times (queued, leased, settled) and the settled ones stay, so the table only grows, and a fifth of it is
  // ever more deliveries whose dead versions every claim walks past in the index of pending ones until a vacuum
  // (measured: the database's CPU for the same burst of deliveries doubled over 84,000 dead rows, and a VACUUM
  // brought it back). The server's autovacuum must be on for this to act; `vigil serve` warns at start when it is
  // off.
  "23_outbox_vacuumed_often": statements(`
    ALTER TABLE webhook_deliveries SET (
      autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
      autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000
    )
  `),
  // vigil_claim as migration 20 made it, but for how it finds the destinations with pending deliveries: each step
  // asked for the first pending row after the last destination ordered by webhook alone, which the index by
  // (webhook, status) answers as well as the index of pending deliveries, and the planner took it whenever its
  // statistics counted many pending rows, as during a backlog. That index holds every delivery ever made, and its
  // pending rows of a webhook come after all its delivered ones: each step walked the webhook's whole history, so
  // a claim grew with every delivery ever made (measured: 59 index pages for the first step over 82,500 delivered
  // rows against 5 in the index of pending ones). Ordered as the index of pending deliveries is, only that index
  // gives the order without sorting, and each step reads a few pages whatever the history.
  "24_outbox_claim_pending_order": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(claimByPending)),
  // A destination's last outcome (its last error, or none since a delivery went through) is its latest delivery
  // that failed or went through, newest first by `seq`: found by this index in a few pages, where the index by
  // (webhook, status) gave every delivery of the destination, read from the table and sorted, at every call of the
  // destinations' stats (measured: 260 ms and 45,000 pages read for five destinations of 44,000 deliveries each).
  "25_outbox_outcomes_by_destination": statements(`
    CREATE INDEX webhook_deliveries_outcomes ON webhook_deliveries (webhook_id, seq)
      WHERE last_error IS NOT NULL OR status = 'delivered'
  `),
  // The outbox's failed deliveries by destination, so the backlog (`/metrics`) counts them, as it counts the pending
  // ones in the index of pending deliveries, from them alone. The index by (webhook, status) answered it by a probe
  // per destination or a walk of every delivery ever made, whichever the planner judged cheaper (measured: 1,227
  // pages for 305 destinations, five of them with 20,000 deliveries each, against 6 with this index).
  "26_outbox_failed_by_destination": statements(`
    CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (webhook_id) WHERE status = 'dead'
  `),
  // A chain's retracted alerts, counted for every /health and /metrics while the chain is followed: found by this
  // index, where the count read every alert ever stored (measured: 469 pages over 2,000 alerts, 4,621 over 20,000).
  "27_retracted_alerts_by_chain": statements(`
    CREATE INDEX monitor_alerts_retracted ON monitor_alerts (chain_id) WHERE retracted_at IS NOT NULL
  `),
  // The index by (webhook, status) answered no query any more: a destination's pending deliveries are read from the
  // index of pending ones (migrations 20 and 24), its failed ones from the index of failed ones (26), its last
  // outcome from the index of outcomes (25). It held every delivery ever made, and every delivery wrote it three
  // times (queued, leased and settled each write a new version of the row, since each changes an indexed column).
  // The SQLite store dropped its own in its migration 18.
  "28_outbox_by_destination_dropped": statements(`
    DROP INDEX webhook_deliveries_by_webhook
  `)
}
