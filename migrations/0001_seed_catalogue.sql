-- Custom SQL migration file, put your code below! --
-- Sandbox catalogue: which crypto assets are offered where, for which fiat amounts, at which sandbox rates.
INSERT INTO "crypto_assets" ("code", "network", "decimals", "min_amount", "max_amount", "allowed_countries", "blocked_countries", "usd_rate", "sort_order") VALUES
  ('BTC',  'BITCOIN',             8,  '20', '100000', NULL, '{KP,IR,CU,SY}', '60000', 10),
  ('ETH',  'ETHEREUM',            18, '10', '100000', NULL, '{KP,IR,CU,SY}', '3000', 20),
  ('BNB',  'BINANCE_SMART_CHAIN', 18, '10', '50000',  NULL, '{KP,IR,CU,SY,US}', '600', 30),
  ('USDT', 'ETHEREUM',            6,  '10', '100000', NULL, '{KP,IR,CU,SY}', '1', 40),
  ('USDT', 'TRON',                6,  '1',  '100000', NULL, '{KP,IR,CU,SY}', '1', 41),
  ('USDT', 'BINANCE_SMART_CHAIN', 18, '1',  '100000', NULL, '{KP,IR,CU,SY,US}', '1', 42),
  ('USDT', 'POLYGON',             6,  '1',  '100000', NULL, '{KP,IR,CU,SY}', '1', 43),
  ('USDT', 'SOLANA',              6,  '1',  '100000', NULL, '{KP,IR,CU,SY}', '1', 44),
  ('USDT', 'AVALANCHE',           6,  '1',  '100000', NULL, '{KP,IR,CU,SY}', '1', 45),
  ('USDT', 'OMNI',                8,  '500', '100000', '{GB,DE,FR,NL,ES,IT,CH}', '{}', '1', 46),
  ('TRX',  'TRON',                6,  '1',  '20000',  NULL, '{KP,IR,CU,SY}', '0.12', 50);
--> statement-breakpoint
INSERT INTO "fiat_rates" ("currency", "usd_rate") VALUES
  ('USD', '1'), ('EUR', '1.08'), ('GBP', '1.27'), ('CHF', '1.13'), ('CAD', '0.73'), ('AUD', '0.66'),
  ('JPY', '0.0067'), ('INR', '0.012'), ('BRL', '0.18'), ('MXN', '0.055'), ('TRY', '0.029'), ('ZAR', '0.055'),
  ('NGN', '0.00065');
