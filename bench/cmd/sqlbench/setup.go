package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// benchDB is the database the comparison runs on, and readerRole the
// read-only role every server connects as (the README's reader role).
const (
	benchDB    = "mcpkit_bench"
	readerRole = "mcpkit_bench_reader"
	// dataVersion changes when the data below does, so that a database
	// made by an older harness is made again.
	dataVersion = 1
)

// shopSQL makes the shop: 100k customers, 1k products, 500k orders (5 per
// customer), 1.5M order lines (3 per order), so that customers 1000 to
// 1065 have 990 order lines.
var shopSQL = []string{
	`DROP TABLE IF EXISTS order_lines, orders, products, customers, bench_meta`,
	`CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL,
		country text NOT NULL, created_at timestamptz NOT NULL)`,
	`INSERT INTO customers SELECT i, 'Customer ' || i, 'customer' || i || '@example.com',
		(ARRAY['DE','FR','US','JP','BR'])[1 + i % 5], timestamptz '2024-01-01 00:00:00+00' + i * interval '5 minutes'
		FROM generate_series(1, 100000) i`,
	`CREATE TABLE products (id bigint PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL)`,
	`INSERT INTO products SELECT i, 'Product ' || i, (i % 500) + 0.99 FROM generate_series(1, 1000) i`,
	`CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers,
		status text NOT NULL, created_at timestamptz NOT NULL)`,
	`INSERT INTO orders SELECT i, 1 + (i - 1) / 5, (ARRAY['new','paid','shipped','delivered'])[1 + i % 4],
		timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute' FROM generate_series(1, 500000) i`,
	`CREATE INDEX orders_customer_id ON orders (customer_id)`,
	`CREATE TABLE order_lines (id bigint PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders,
		product_id bigint NOT NULL REFERENCES products, quantity int NOT NULL, price numeric(10,2) NOT NULL)`,
	`INSERT INTO order_lines SELECT i, 1 + (i - 1) / 3, 1 + i % 1000, 1 + i % 7, (i % 500) + 0.99
		FROM generate_series(1, 1500000) i`,
	`CREATE INDEX order_lines_order_id ON order_lines (order_id)`,
	`VACUUM ANALYZE`,
	`CREATE TABLE bench_meta (version int NOT NULL)`,
	fmt.Sprintf(`INSERT INTO bench_meta VALUES (%d)`, dataVersion),
}

// readerSQL makes the read-only role as the README describes it.
var readerSQL = []string{
	`DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '` + readerRole + `') THEN
			CREATE ROLE ` + readerRole + ` LOGIN PASSWORD 'mcpkit-bench' NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
		END IF;
	END $$`,
	`GRANT CONNECT ON DATABASE ` + benchDB + ` TO ` + readerRole,
	`GRANT USAGE ON SCHEMA public TO ` + readerRole,
	`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ` + readerRole,
	`ALTER ROLE ` + readerRole + ` SET temp_file_limit = '1GB'`,
}

// setup makes the bench database, its data and the reader role when
// missing, through admin (a superuser DSN), and returns the reader's DSN.
func setup(ctx context.Context, admin string, logf func(string, ...any)) (string, error) {
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connecting as the admin DSN: %w", err)
	}
	var exists bool
	err = c.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", benchDB).Scan(&exists)
	if err == nil && !exists {
		_, err = c.Exec(ctx, "CREATE DATABASE "+benchDB)
	}
	c.Close(ctx)
	if err != nil {
		return "", err
	}
	benchAdmin, err := withDB(admin, benchDB, "", "")
	if err != nil {
		return "", err
	}
	c, err = pgx.Connect(ctx, benchAdmin)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	var version int
	if c.QueryRow(ctx, "SELECT version FROM bench_meta").Scan(&version) != nil || version != dataVersion {
		logf("making the shop in %s (100k customers, 500k orders, 1.5M order lines)...", benchDB)
		start := time.Now()
		for _, q := range shopSQL {
			if _, err := c.Exec(ctx, q); err != nil {
				return "", fmt.Errorf("%.60s: %w", q, err)
			}
		}
		logf("made in %s", time.Since(start).Round(100*time.Millisecond))
	}
	for _, q := range readerSQL {
		if _, err := c.Exec(ctx, q); err != nil {
			return "", fmt.Errorf("%.60s: %w", q, err)
		}
	}
	return withDB(admin, benchDB, readerRole, "mcpkit-bench")
}

// withDB returns dsn for database db, as user (with password) when given.
func withDB(dsn, db, user, password string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("want a postgres:// DSN, got %q", dsn)
	}
	u.Path = "/" + db
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String(), nil
}
