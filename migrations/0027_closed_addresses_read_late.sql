-- A second cursor per chain node, for a family that reads by address (Solana): the addresses of closed
-- transactions (read for late deposits for 7 days) are read once a minute rather than every scan, so a
-- scan's cost follows the open transactions (src/chain/watcher.ts). Null: read with the open ones up to
-- scanned_block. Adding a nullable column changes only the catalog: nothing is rewritten.
ALTER TABLE "chain_nodes" ADD COLUMN "late_scanned_block" bigint;
