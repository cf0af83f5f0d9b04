ALTER TABLE "crypto_assets" ADD COLUMN "name" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "crypto_assets" ADD COLUMN "symbol" text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE "crypto_assets" SET "name" = v.name, "symbol" = v.symbol
FROM (VALUES
  ('BTC', 'Bitcoin', 'BTC'),
  ('ETH', 'Ether', 'ETH'),
  ('BNB', 'BNB', 'BNB'),
  ('USDT', 'Tether USD', 'USDT'),
  ('TRX', 'TRON', 'TRX')
) AS v(code, name, symbol)
WHERE "crypto_assets"."code" = v.code;
