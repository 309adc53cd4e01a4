-- 0002_inventory.sql - inventory runs: what a live (or offline) inventory saw.
-- Conventions as in 0001_init.sql (RFC 3339 UTC times, INTEGER money).

CREATE TABLE inventory_runs (
	id           INTEGER PRIMARY KEY,
	started_at   TEXT NOT NULL,
	finished_at  TEXT NOT NULL,
	source       TEXT NOT NULL,            -- 'live' or 'exports'
	regions      TEXT NOT NULL,            -- comma-separated
	clusters     TEXT NOT NULL,            -- comma-separated
	volumes      INTEGER NOT NULL CHECK (volumes >= 0),
	kube_volumes INTEGER NOT NULL CHECK (kube_volumes >= 0),
	aws_calls    INTEGER NOT NULL DEFAULT 0,
	notices      TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
	inventory_json TEXT NOT NULL           -- the ebsmigrate.inventory/v1 document
);
CREATE INDEX inventory_runs_started_at ON inventory_runs (started_at);
