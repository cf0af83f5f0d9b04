CREATE TABLE "webhook_secrets" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"secret_enc" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_secrets_merchant_idx" ON "webhook_secrets" USING btree ("merchant_id");--> statement-breakpoint
-- Every merchant keeps signing with the secret it has: no webhook goes out unsigned or signed otherwise.
INSERT INTO "webhook_secrets" ("merchant_id", "secret_enc") SELECT "id", "webhook_secret_enc" FROM "merchants";
