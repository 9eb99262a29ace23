CREATE TABLE IF NOT EXISTS orders (
  id bigserial PRIMARY KEY,
  item text NOT NULL,
  placed_at timestamptz NOT NULL DEFAULT now()
);
