CREATE TABLE "chain_transfers" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"chain_node_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"tx_hash" text NOT NULL,
	"asset" text NOT NULL,
	"amount" numeric(38, 18) NOT NULL,
	"sender" text,
	"block" bigint NOT NULL,
	"handed_over_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "chain_transfers_transfer_idx" ON "chain_transfers" USING btree ("transaction_id","tx_hash","asset");--> statement-breakpoint
CREATE INDEX "chain_transfers_waiting_idx" ON "chain_transfers" USING btree ("chain_node_id","next_attempt_at") WHERE "chain_transfers"."handed_over_at" is null;