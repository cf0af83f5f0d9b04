-- Fewer index writes per transaction (docs/capacity.md, the service's PostgreSQL). updated_at, which every
-- write of the projection changes, is BRIN-indexed: on PostgreSQL 16 and later a change to a column only
-- BRIN indexes leaves the new row version on its page (a HOT update) without an entry in the other indexes.
-- webhook_events.status, which every delivery changes, is no longer indexed (no query read it through an
-- index), and a row without a card has no entry in the fingerprint index.
DROP INDEX "webhook_events_status_idx";--> statement-breakpoint
DROP INDEX "transactions_fingerprint_idx";--> statement-breakpoint
DROP INDEX "transactions_updated_idx";--> statement-breakpoint
CREATE INDEX "transactions_fingerprint_idx" ON "transactions" USING btree ("merchant_id","card_fingerprint") WHERE "transactions"."card_fingerprint" is not null;--> statement-breakpoint
CREATE INDEX "transactions_updated_idx" ON "transactions" USING brin ("updated_at");
