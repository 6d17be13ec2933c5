-- The table of inventory-decrement.sql. Variables: skus (how many), stock (units of each).
CREATE TABLE inventory (
    sku bigint PRIMARY KEY,
    qty integer NOT NULL CHECK (qty >= 0)
);

INSERT INTO inventory (sku, qty)
    SELECT sku, :stock FROM generate_series(1, :skus) AS sku;
