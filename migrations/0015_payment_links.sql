CREATE TABLE "payment_links" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"mode" text NOT NULL,
	"template_id" text NOT NULL,
	"kind" text DEFAULT 'card' NOT NULL,
	"crypto" jsonb,
	"amount_minor" bigint,
	"currency" text,
	"order_id" text,
	"terminal_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"transaction_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_templates" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"mode" text NOT NULL,
	"layout" text DEFAULT 'standard' NOT NULL,
	"name" text NOT NULL,
	"screenshot_url" text,
	"redirect_url" text NOT NULL,
	"webhook_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "payment_link_id" text;--> statement-breakpoint
ALTER TABLE "payment_links" ADD CONSTRAINT "payment_links_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_links" ADD CONSTRAINT "payment_links_template_id_payment_templates_id_fk" FOREIGN KEY ("template_id") REFERENCES "public"."payment_templates"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_templates" ADD CONSTRAINT "payment_templates_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_links_merchant_idx" ON "payment_links" USING btree ("merchant_id","mode","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_links_order_idx" ON "payment_links" USING btree ("merchant_id","mode","order_id") WHERE "payment_links"."order_id" is not null;--> statement-breakpoint
CREATE INDEX "payment_templates_merchant_idx" ON "payment_templates" USING btree ("merchant_id","mode");