-- Alternative payment methods (docs/hosted.md): every merchant that has a sandbox card terminal in a mode
-- gets the sandbox bank and wallet terminals there too, as new merchants do (src/sandbox/tables.ts).
INSERT INTO "terminals" ("id", "merchant_id", "mode", "connector", "kinds", "priority", "descriptor")
SELECT 'ter_' || substr(md5(random()::text || clock_timestamp()::text || s."merchant_id" || s."mode" || a."connector"), 1, 20),
       s."merchant_id", s."mode", a."connector", ARRAY['apm'], a."priority", a."descriptor"
FROM (
  SELECT DISTINCT "merchant_id", "mode" FROM "terminals"
  WHERE "connector" = 'sandbox-acquirer' AND "active"
) s
CROSS JOIN (VALUES ('sandbox-bank', 10, 'SANDBOX*BANK'), ('sandbox-wallet', 20, 'SANDBOX*WALLET')) AS a("connector", "priority", "descriptor")
WHERE NOT EXISTS (
  SELECT 1 FROM "terminals" t
  WHERE t."merchant_id" = s."merchant_id" AND t."mode" = s."mode" AND 'apm' = ANY(t."kinds")
);
