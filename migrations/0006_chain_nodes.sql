CREATE SEQUENCE "public"."deposit_address_index" INCREMENT BY 1 MINVALUE 0 MAXVALUE 9223372036854775807 START WITH 0 CACHE 1;--> statement-breakpoint
CREATE TABLE "chain_nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"mode" text NOT NULL,
	"network" text NOT NULL,
	"rpc_url" text NOT NULL,
	"confirmations" integer NOT NULL,
	"tokens" jsonb NOT NULL,
	"seed_enc" text NOT NULL,
	"faucet_key_enc" text,
	"scanned_block" bigint,
	"scanned_hash" text,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"active" boolean DEFAULT true NOT NULL,
	"retired_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chain_sends" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"chain_node_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"from_address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"raw_transaction" text NOT NULL,
	"tx_hash" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposit_addresses" (
	"address" text PRIMARY KEY NOT NULL,
	"chain_node_id" text NOT NULL,
	"hd_index" bigint NOT NULL,
	"transaction_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "chain_nodes_active_idx" ON "chain_nodes" USING btree ("mode","network") WHERE "chain_nodes"."active";--> statement-breakpoint
CREATE UNIQUE INDEX "chain_sends_attempt_idx" ON "chain_sends" USING btree ("idempotency_key","attempt");--> statement-breakpoint
CREATE UNIQUE INDEX "chain_sends_nonce_idx" ON "chain_sends" USING btree ("chain_node_id","from_address","nonce") WHERE "chain_sends"."state" <> 'rejected';--> statement-breakpoint
CREATE UNIQUE INDEX "deposit_addresses_transaction_idx" ON "deposit_addresses" USING btree ("transaction_id","chain_node_id");--> statement-breakpoint
CREATE UNIQUE INDEX "deposit_addresses_index_idx" ON "deposit_addresses" USING btree ("chain_node_id","hd_index");