-- 0001_init.sql - the first schema: metadata, the price book with its history, recorded plans.
--
-- Applied by ledger.c inside one transaction, which then sets PRAGMA user_version = 1.
-- Forward-only: later files (0002_inventory.sql, 0003_apply.sql, 0004_bench.sql, ...) add
-- tables; they never rewrite these. Conventions every migration keeps:
--   * ids are INTEGER PRIMARY KEY; other tables point at them with REFERENCES (foreign keys
--     are on for every connection);
--   * times are TEXT, RFC 3339 UTC ("2026-09-01T12:00:00Z"); dates are TEXT "YYYY-MM-DD";
--   * money is INTEGER: unit prices in 1e-10 USD ("price units"), amounts in micro-dollars
--     (1e-6 USD). No REAL column ever holds money.
-- Inventory runs will reference plans(id) and price_versions(id); the apply ledger will
-- reference plans(id); bench results will reference the apply ledger.

-- Free-form facts about the database itself (e.g. 'created_by' = ebsmigrate version).
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

-- One row per stored price book. Exactly one row (the newest stored) has is_current = 1.
CREATE TABLE price_versions (
	id             INTEGER PRIMARY KEY,
	source         TEXT NOT NULL,           -- 'bundled pricing/ (AWS Pricing API GetProducts)', ...
	effective_date TEXT NOT NULL
		CHECK (effective_date GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
	fetched_at     TEXT,                    -- when the data was retrieved; NULL when unknown
	created_at     TEXT NOT NULL,           -- when this row was stored
	is_current     INTEGER NOT NULL DEFAULT 0 CHECK (is_current IN (0, 1))
);
CREATE UNIQUE INDEX price_versions_one_current ON price_versions (is_current) WHERE is_current = 1;

-- Every known price of a version. A price the source did not have has no row (unknown).
-- item: 'storage:gp2' .. 'storage:standard' (per GB-Mo), 'gp3_iops' (per IOPS-Mo above 3,000),
-- 'gp3_throughput_gibps' (per GiBps-mo as published), 'io1_iops', 'io2_iops:0' .. 'io2_iops:2'.
CREATE TABLE prices (
	version_id    INTEGER NOT NULL REFERENCES price_versions (id) ON DELETE CASCADE,
	location      TEXT NOT NULL,            -- regionCode: 'ap-northeast-2', 'us-west-2-lax-1'
	location_name TEXT,                     -- 'Asia Pacific (Seoul)'
	item          TEXT NOT NULL,
	price_units   INTEGER NOT NULL CHECK (price_units >= 0),
	PRIMARY KEY (version_id, location, item)
) WITHOUT ROWID;

-- Plans as generated (the ebsmigrate.plan/v1 document) with their summary.
CREATE TABLE plans (
	id                    INTEGER PRIMARY KEY,
	generated_at          TEXT NOT NULL,
	mode                  TEXT NOT NULL,
	price_version         INTEGER REFERENCES price_versions (id),
	volumes               INTEGER NOT NULL CHECK (volumes >= 0),
	savings_monthly_micro INTEGER NOT NULL,
	plan_json             TEXT NOT NULL,
	created_at            TEXT NOT NULL
);
CREATE INDEX plans_generated_at ON plans (generated_at);
