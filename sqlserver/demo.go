package sqlserver

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Demo database sizes.
const (
	demoCustomers = 250
	demoProducts  = 80
	demoOrders    = 1200
)

const demoSchema = `
PRAGMA page_size = 4096;
CREATE TABLE customers (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	email      TEXT    NOT NULL UNIQUE,
	country    TEXT    NOT NULL,
	created_at TEXT    NOT NULL
);
CREATE INDEX customers_country ON customers (country);
CREATE TABLE products (
	id          INTEGER PRIMARY KEY,
	sku         TEXT    NOT NULL UNIQUE,
	name        TEXT    NOT NULL,
	category    TEXT    NOT NULL,
	price_cents INTEGER NOT NULL CHECK (price_cents > 0),
	stock       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX products_category ON products (category);
CREATE TABLE orders (
	id          INTEGER PRIMARY KEY,
	customer_id INTEGER NOT NULL REFERENCES customers (id),
	status      TEXT    NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
	ordered_at  TEXT    NOT NULL,
	shipped_at  TEXT
);
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_ordered_at ON orders (ordered_at);
CREATE TABLE order_lines (
	order_id         INTEGER NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
	line_no          INTEGER NOT NULL,
	product_id       INTEGER NOT NULL REFERENCES products (id),
	quantity         INTEGER NOT NULL CHECK (quantity > 0),
	unit_price_cents INTEGER NOT NULL,
	PRIMARY KEY (order_id, line_no)
);
CREATE INDEX order_lines_product ON order_lines (product_id);
CREATE VIEW order_totals AS
	SELECT o.id AS order_id, o.customer_id, o.status, o.ordered_at,
	       sum(l.quantity * l.unit_price_cents) AS total_cents
	FROM orders o JOIN order_lines l ON l.order_id = o.id
	GROUP BY o.id;
`

var (
	demoFirst     = []string{"Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kemal", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomoko", "Uma", "Viktor", "Wen", "Yusuf", "Zofia"}
	demoLast      = []string{"Almeida", "Berger", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Horvath", "Ito", "Jansen", "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Schmidt", "Tanaka", "Urbanek", "Vargas", "Weber", "Yilmaz", "Zhang"}
	demoCountries = []string{"DE", "FR", "IT", "ES", "NL", "PL", "SE", "PT", "AT", "JP", "US", "BR", "TR", "IN"}
	demoCategory  = map[string][]string{
		"books":   {"Field Guide", "Cookbook", "Atlas", "Novel", "Poetry Collection"},
		"garden":  {"Trowel", "Watering Can", "Seed Kit", "Pruning Shears", "Planter"},
		"kitchen": {"Chef Knife", "Cast Iron Pan", "Teapot", "Cutting Board", "Spice Rack"},
		"office":  {"Notebook", "Fountain Pen", "Desk Lamp", "Stapler", "Paper Tray"},
		"outdoor": {"Tent", "Headlamp", "Water Bottle", "Backpack", "Camping Stove"},
	}
	demoAdjective = []string{"Classic", "Compact", "Deluxe", "Everyday", "Pro", "Travel", "Heritage", "Mini"}
	demoStatus    = []string{"delivered", "delivered", "delivered", "shipped", "paid", "pending", "cancelled"}
)

// EnsureDemo creates the demo database at path unless a file is already
// there. The demo is generated from a fixed seed, so every copy holds the
// same rows: customers, products, orders and order_lines (a few thousand
// rows with foreign keys and indexes) and an order_totals view. The file
// appears atomically, complete or not at all.
func EnsureDemo(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sqlserver: demo database: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".demo-*.db")
	if err != nil {
		return fmt.Errorf("sqlserver: demo database: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	if err := writeDemo(tmp); err != nil {
		return fmt.Errorf("sqlserver: demo database: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("sqlserver: demo database: %w", err)
	}
	return nil
}

func writeDemo(path string) error {
	dsn, err := sqliteDSN(path, "_pragma=journal_mode(DELETE)")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(demoSchema); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fillDemo(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}

func fillDemo(tx *sql.Tx) error {
	r := rand.New(rand.NewPCG(20240601, 42))
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(t time.Time) string { return t.Format("2006-01-02 15:04:05") }
	for id := 1; id <= demoCustomers; id++ {
		first, last := demoFirst[r.IntN(len(demoFirst))], demoLast[r.IntN(len(demoLast))]
		email := fmt.Sprintf("%s.%s.%d@example.com", strings.ToLower(first), strings.ToLower(last), id)
		created := epoch.Add(time.Duration(r.IntN(365*24*60)) * time.Minute)
		if _, err := tx.Exec(`INSERT INTO customers VALUES (?, ?, ?, ?, ?)`, id, first+" "+last, email,
			demoCountries[r.IntN(len(demoCountries))], stamp(created)); err != nil {
			return err
		}
	}
	cats := []string{"books", "garden", "kitchen", "office", "outdoor"}
	prices := make([]int, demoProducts+1)
	for id := 1; id <= demoProducts; id++ {
		cat := cats[(id-1)%len(cats)]
		item := demoCategory[cat][r.IntN(len(demoCategory[cat]))]
		name := demoAdjective[r.IntN(len(demoAdjective))] + " " + item
		prices[id] = 199 + r.IntN(200)*50
		if _, err := tx.Exec(`INSERT INTO products VALUES (?, ?, ?, ?, ?, ?)`, id,
			fmt.Sprintf("%s-%04d", strings.ToUpper(cat[:3]), id), name, cat, prices[id], r.IntN(500)); err != nil {
			return err
		}
	}
	for id := 1; id <= demoOrders; id++ {
		ordered := epoch.Add(time.Duration(400*24*60+r.IntN(365*24*60)) * time.Minute)
		status := demoStatus[r.IntN(len(demoStatus))]
		var shipped any
		if status == "shipped" || status == "delivered" {
			shipped = stamp(ordered.Add(time.Duration(12+r.IntN(96)) * time.Hour))
		}
		if _, err := tx.Exec(`INSERT INTO orders VALUES (?, ?, ?, ?, ?)`, id, 1+r.IntN(demoCustomers), status,
			stamp(ordered), shipped); err != nil {
			return err
		}
		lines := 1 + r.IntN(4)
		for n := 1; n <= lines; n++ {
			p := 1 + r.IntN(demoProducts)
			if _, err := tx.Exec(`INSERT INTO order_lines VALUES (?, ?, ?, ?, ?)`, id, n, p, 1+r.IntN(5), prices[p]); err != nil {
				return err
			}
		}
	}
	return nil
}
