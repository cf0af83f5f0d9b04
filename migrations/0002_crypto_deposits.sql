CREATE TABLE "crypto_deposits" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"tx_hash" text NOT NULL,
	"amount" numeric(38, 18) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "crypto_deposits_tx_hash_idx" ON "crypto_deposits" USING btree ("transaction_id","tx_hash");