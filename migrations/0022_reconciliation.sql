CREATE TABLE "reconciliation_break_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"break_id" integer NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"state_before" text,
	"state_after" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliation_breaks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"reference" text NOT NULL,
	"kind" text NOT NULL,
	"transaction_id" text,
	"merchant_id" text,
	"mode" text,
	"expected" text,
	"observed" text,
	"message" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"reason" text,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen" integer DEFAULT 1 NOT NULL,
	"last_run_id" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliation_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"trigger" text NOT NULL,
	"sources" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"summary" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "sandbox_operations" ADD COLUMN "transaction_id" text;--> statement-breakpoint
ALTER TABLE "sandbox_operations" ADD COLUMN "amount_minor" bigint;--> statement-breakpoint
ALTER TABLE "sandbox_operations" ADD COLUMN "currency" text;--> statement-breakpoint
CREATE INDEX "reconciliation_break_events_break_idx" ON "reconciliation_break_events" USING btree ("break_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliation_breaks_key_idx" ON "reconciliation_breaks" USING btree ("source","reference","kind");--> statement-breakpoint
CREATE INDEX "reconciliation_breaks_state_idx" ON "reconciliation_breaks" USING btree ("state","kind");--> statement-breakpoint
CREATE INDEX "reconciliation_breaks_transaction_idx" ON "reconciliation_breaks" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "reconciliation_runs_window_idx" ON "reconciliation_runs" USING btree ("trigger","window_end");--> statement-breakpoint
CREATE INDEX "ledger_entries_reference_idx" ON "ledger_entries" USING btree ("reference");--> statement-breakpoint
CREATE INDEX "ledger_entries_created_idx" ON "ledger_entries" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "transactions_updated_idx" ON "transactions" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "transactions_waiting_idx" ON "transactions" USING btree ("created_at") WHERE "transactions"."status" in ('PENDING', 'REDIRECT');--> statement-breakpoint
CREATE INDEX "sandbox_operations_transaction_idx" ON "sandbox_operations" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "sandbox_operations_updated_idx" ON "sandbox_operations" USING btree ("updated_at");--> statement-breakpoint
UPDATE "sandbox_operations" SET "transaction_id" = split_part("idempotency_key", ':', 1) WHERE "transaction_id" IS NULL;
