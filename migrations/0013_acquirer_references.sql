ALTER TABLE "transactions" ADD COLUMN "acquirer_reference" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "refund_reference" text;