CREATE TABLE "aftercare_runs" (
	"ticket" text PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"run_chain" text,
	"run_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "workflow_input" jsonb;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "run_chain" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "run_id" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "status_run_id" text;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "run" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_links" ADD COLUMN "run_chain" text;--> statement-breakpoint
ALTER TABLE "payment_links" ADD COLUMN "run_id" text;--> statement-breakpoint
CREATE INDEX "aftercare_runs_run_idx" ON "aftercare_runs" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "aftercare_runs_chain_idx" ON "aftercare_runs" USING btree ("run_chain");--> statement-breakpoint
-- Transactions and links already closed were bound to no run: none may act for them from here on. Those
-- still open are bound by their running workflow at its next step (docs/operations.md, what binds a run).
UPDATE "transactions" SET "run_chain" = 'legacy' WHERE "status" IN ('SUCCESS', 'FAILED', 'BLOCKED');--> statement-breakpoint
UPDATE "payment_links" SET "run_chain" = 'legacy' WHERE "status" <> 'open';
