-- An order takes :n units of a SKU if that many are left; hot SKUs sell out.
-- Tables: inventory-init.sql. Variables: skus (and stock, in the init file).
--
-- The kit refuses it for the queue modes (outbox, async, async-compact) and runs it in sync
-- only. Whether an order takes its units depends on the stock the orders before it left:
-- the further condition (AND qty >= :n) reads the row at the moment of the write, which a
-- deferred, merged write no longer does, and qty is under CHECK (qty >= 0), which merged
-- decrements could pass or fail otherwise than the same decrements one by one.
\set sku random_zipfian(1, :skus, 1.1)
\set n random(1, 5)
UPDATE inventory SET qty = qty - :n WHERE sku = :sku AND qty >= :n;
