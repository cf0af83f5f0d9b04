CREATE TABLE "ops_actions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"key" text NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"reason" text,
	"status_before" text NOT NULL,
	"status_after" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ops_actions_key_idx" ON "ops_actions" USING btree ("transaction_id","key");--> statement-breakpoint
CREATE INDEX "ops_actions_transaction_idx" ON "ops_actions" USING btree ("transaction_id","created_at");