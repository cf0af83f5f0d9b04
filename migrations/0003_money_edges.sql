CREATE TABLE "crypto_tolerances" (
	"merchant_id" text NOT NULL,
	"crypto_currency" text NOT NULL,
	"tolerance" numeric(38, 18) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sandbox_operations" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"connector" text NOT NULL,
	"operation" text NOT NULL,
	"state" text NOT NULL,
	"reference" text NOT NULL,
	"message" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "card_vault" ALTER COLUMN "pan_enc" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "card_vault" ALTER COLUMN "expiry_enc" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "crypto_tolerance_fiat" numeric(38, 18);--> statement-breakpoint
ALTER TABLE "card_vault" ADD COLUMN "purged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "sender" text;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "disposition" text DEFAULT 'counted' NOT NULL;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "counted_in_payment" boolean DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE "crypto_deposits" SET "counted_in_payment" = true;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "refund_amount" numeric(38, 18);--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "refund_tx_hash" text;--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "held_amount" numeric(38, 18);--> statement-breakpoint
ALTER TABLE "crypto_deposits" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "crypto_tolerances_asset_idx" ON "crypto_tolerances" USING btree ("merchant_id","crypto_currency");--> statement-breakpoint
ALTER TABLE "merchants" DROP COLUMN "crypto_tolerance";