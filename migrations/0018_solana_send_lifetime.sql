ALTER TABLE "chain_sends" ADD COLUMN "context_slot" bigint;--> statement-breakpoint
ALTER TABLE "chain_sends" ADD COLUMN "valid_until_height" bigint;