DROP INDEX "transactions_merchant_idx";--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "country" text;--> statement-breakpoint
CREATE INDEX "ledger_entries_wallet_time_idx" ON "ledger_entries" USING btree ("wallet_id","created_at","id");--> statement-breakpoint
CREATE INDEX "transactions_list_idx" ON "transactions" USING btree ("merchant_id","mode","created_at","id");