-- 0005_plan_sha256.sql - the SHA-256 of each recorded plan document, so `apply --plan FILE`
-- finds a plan file that is already recorded (same bytes) instead of recording it again.
-- Conventions as in 0001_init.sql. Lower-case hex of plans.plan_json's bytes, written by
-- ledger.c with every new plan. Rows recorded before this migration keep NULL (SQL cannot hash);
-- the ledger compares their documents directly.

ALTER TABLE plans ADD COLUMN plan_sha256 TEXT;
CREATE INDEX plans_sha256 ON plans (plan_sha256);
