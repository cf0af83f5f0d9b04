CREATE TABLE "merchant_fees" (
	"merchant_id" text NOT NULL,
	"mode" text NOT NULL,
	"kind" text NOT NULL,
	"currency" text NOT NULL,
	"percent" numeric(9, 4) DEFAULT '0' NOT NULL,
	"fixed_minor" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_fees_merchant_id_mode_kind_currency_pk" PRIMARY KEY("merchant_id","mode","kind","currency")
);
--> statement-breakpoint
ALTER TABLE "merchant_fees" ADD CONSTRAINT "merchant_fees_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE no action ON UPDATE no action;