package sqlserver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A confirmed write can change more than its statement says: triggers on
// the tables it writes run statements of their own, and foreign keys with
// ON DELETE/UPDATE actions change the rows that reference it. So the
// execute tool's confirmation lists the triggers the database would fire
// for the statement (found without running it), the confirmation holds
// only for that list — the write is refused when the triggers found as it
// runs differ from those the user saw — and the result reports the rows
// changed in all beside the rows the statement itself affected.
//
// SQLite compiles a statement's triggers, those of the foreign-key actions
// and those their bodies fire, into its program: EXPLAIN lists them, each
// subprogram opening with "-- TRIGGER name". PostgreSQL's EXPLAIN names the
// tables an INSERT, UPDATE, DELETE or MERGE writes (data-modifying CTEs
// and rule actions included); the triggers are those of pg_trigger on
// these tables, their partitions and children, and the tables their
// cascading foreign keys change, for the events concerned. What a
// PostgreSQL trigger function's body then writes is known only once it has
// run: the count of rows changed in all (pg_stat_xact_user_tables) says
// it.

const (
	// maxTriggersRead bounds the triggers read for one statement; the
	// digest the confirmation holds to counts the others.
	maxTriggersRead = 100
	// maxTriggersShown bounds those the confirmation lists.
	maxTriggersShown = 20
	// triggerTextLen bounds the characters shown of each definition.
	triggerTextLen = 300
)

// trigger is a trigger a write would fire.
type trigger struct {
	name  string
	table string // schema-qualified on PostgreSQL
	// definition is its CREATE TRIGGER statement: timing, events, table
	// and, on SQLite, its body.
	definition string
	// code identifies the body of a PostgreSQL trigger's function (a
	// digest), so that a function replaced after the user confirmed is
	// noticed; empty on SQLite, whose definition holds the body.
	code string
}

// triggerSet is what a write's confirmation says of its triggers.
type triggerSet struct {
	// known is false when the database could not tell (PostgreSQL plans
	// only INSERT, UPDATE, DELETE and MERGE ahead).
	known bool
	list  []trigger // at most maxTriggersRead
	total int       // the triggers found, when more than list holds
}

// digest identifies the set: the confirmation is bound to it.
func (s triggerSet) digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%t\x00%d\x00%d\x00", s.known, s.total, len(s.list))
	for _, t := range s.list {
		fmt.Fprintf(h, "%d:%s%d:%s%d:%s%d:%s", len(t.name), t.name, len(t.table), t.table,
			len(t.definition), t.definition, len(t.code), t.code)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// describe is the confirmation's paragraph on the triggers: each on one
// line (names and definitions are the database's text, which the
// statement's author may have written: no line breaks of theirs reach the
// user), bounded in number and length.
func (s triggerSet) describe() string {
	if !s.known {
		return "The database cannot list ahead the triggers this statement fires (it plans only INSERT, UPDATE, DELETE and MERGE); " +
			"the result will say how many rows changed in all."
	}
	if len(s.list) == 0 {
		return "It fires no triggers."
	}
	var b strings.Builder
	n := max(s.total, len(s.list))
	fmt.Fprintf(&b, "It fires %d %s, which may change other rows and tables:\n", n, plural(int64(n), "trigger", "triggers"))
	shown := s.list[:min(len(s.list), maxTriggersShown)]
	for _, t := range shown {
		fmt.Fprintf(&b, "- %s on %s: %s\n", clip(oneLineText(t.name), 80), clip(oneLineText(t.table), 80),
			clip(oneLineText(t.definition), triggerTextLen))
	}
	if n > len(shown) {
		fmt.Fprintf(&b, "- and %d more\n", n-len(shown))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// clip shortens s to n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// errTriggersChanged refuses a confirmed write whose triggers are no
// longer those the user was shown.
type errTriggersChanged struct{ now triggerSet }

func (e *errTriggersChanged) Error() string {
	return "Not executed: the triggers this statement fires changed after the user confirmed it; the database was not changed. " +
		"Now: " + e.now.describe() + " Call execute again to ask the user anew."
}

// writeResult is what a write reports.
type writeResult struct {
	rows int64 // affected by the statement itself
	// total is the rows changed in all (inserted, updated or deleted),
	// triggers and foreign-key actions included; -1 when unknown.
	total int64
}

func (r writeResult) text() string {
	s := fmt.Sprintf("Executed; %d %s affected", r.rows, plural(r.rows, "row", "rows"))
	if r.total >= 0 {
		s += fmt.Sprintf(", %d %s changed in all (triggers and foreign-key actions included)", r.total, plural(r.total, "row", "rows"))
	}
	return s + "."
}

// sqliteTriggers lists the triggers SQLite compiles into query's program
// on c, the connection that would run it: EXPLAIN lists every subprogram,
// nested ones included. A statement first makes c read the schema anew
// should another connection have changed it.
func sqliteTriggers(ctx context.Context, c *sql.Conn, query string, args []any) (triggerSet, error) {
	if _, err := c.ExecContext(ctx, "SELECT 1 FROM sqlite_schema LIMIT 1"); err != nil {
		return triggerSet{}, err
	}
	rows, err := c.QueryContext(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		return triggerSet{}, err
	}
	var names []string
	seen := map[string]bool{}
	for rows.Next() {
		var addr, p1, p2, p3, p5 any
		var op string
		var p4, comment sql.NullString
		if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			rows.Close()
			return triggerSet{}, err
		}
		if name, ok := strings.CutPrefix(p4.String, "-- TRIGGER "); ok && op == "Init" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return triggerSet{}, err
	}
	set := triggerSet{known: true, total: len(names)}
	if len(names) == 0 {
		return set, nil
	}
	list, _ := json.Marshal(names)
	rows, err = c.QueryContext(ctx, `SELECT name, tbl_name, sql FROM (
			SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'trigger'
			UNION ALL SELECT name, tbl_name, sql FROM sqlite_temp_schema WHERE type = 'trigger')
		WHERE name IN (SELECT value FROM json_each(?)) ORDER BY tbl_name, name LIMIT ?`, string(list), maxTriggersRead)
	if err != nil {
		return triggerSet{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var t trigger
		if err := rows.Scan(&t.name, &t.table, &t.definition); err != nil {
			return triggerSet{}, err
		}
		set.list = append(set.list, t)
	}
	return set, rows.Err()
}

// Event bits of pg_trigger.tgtype.
const (
	pgTriggerInsert = 1 << 2
	pgTriggerDelete = 1 << 3
	pgTriggerUpdate = 1 << 4
)

// pgTriggersFired lists the enabled user triggers on the tables $1.$2
// (schemas and names) for the events $3, on their partitions and
// inheritance children, and on the tables their cascading foreign keys
// change (a cascading delete deletes, SET NULL or SET DEFAULT updates, an
// update cascades as one); a trigger cloned onto a partition is listed once,
// on its parent. It reads at most $4 rows; the last column counts them all.
const pgTriggersFired = `WITH RECURSIVE hit(rel, events) AS (
		SELECT to_regclass(format('%I.%I', s, r))::oid, e FROM unnest($1::text[], $2::text[], $3::int[]) AS x(s, r, e)
		WHERE to_regclass(format('%I.%I', s, r)) IS NOT NULL
	UNION
		SELECT x.rel, x.events FROM hit h CROSS JOIN LATERAL (
			SELECT i.inhrelid AS rel, h.events FROM pg_inherits i WHERE i.inhparent = h.rel
			UNION ALL
			SELECT c.conrelid, (CASE WHEN h.events & 8 <> 0 AND c.confdeltype = 'c' THEN 8 ELSE 0 END) |
				(CASE WHEN h.events & 8 <> 0 AND c.confdeltype IN ('n', 'd')
					OR h.events & 16 <> 0 AND c.confupdtype IN ('c', 'n', 'd') THEN 16 ELSE 0 END)
			FROM pg_constraint c WHERE c.contype = 'f' AND c.confrelid = h.rel) x
		WHERE x.events <> 0),
	fired AS (
		SELECT DISTINCT t.oid FROM pg_trigger t JOIN hit h ON t.tgrelid = h.rel
		WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND t.tgenabled <> 'D' AND t.tgtype::int & h.events <> 0)
	SELECT t.tgname, format('%I.%I', n.nspname, c.relname), pg_get_triggerdef(t.oid),
		md5(COALESCE(p.prosrc, '') || '/' || COALESCE(p.probin, '')), count(*) OVER ()
	FROM fired f JOIN pg_trigger t ON t.oid = f.oid JOIN pg_class c ON c.oid = t.tgrelid
	JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
	ORDER BY 2, 1 LIMIT $4`

// pgPlanNode is the part of an EXPLAIN (FORMAT JSON) plan node that names
// what it writes.
type pgPlanNode struct {
	NodeType  string       `json:"Node Type"`
	Operation string       `json:"Operation"`
	Relation  string       `json:"Relation Name"`
	Schema    string       `json:"Schema"`
	Conflict  string       `json:"Conflict Resolution"`
	Plans     []pgPlanNode `json:"Plans"`
}

// pgWrites collects the tables the plan's ModifyTable nodes write, with the
// trigger events each fires.
func pgWrites(n *pgPlanNode, schemas, names *[]string, events *[]int, depth int) error {
	if depth > 100 {
		return errors.New("plan too deep")
	}
	if n.NodeType == "ModifyTable" && n.Relation != "" {
		var e int
		switch n.Operation {
		case "Insert":
			e = pgTriggerInsert
			if n.Conflict == "UPDATE" {
				e |= pgTriggerUpdate
			}
		case "Update":
			e = pgTriggerUpdate
		case "Delete":
			e = pgTriggerDelete
		default: // Merge
			e = pgTriggerInsert | pgTriggerUpdate | pgTriggerDelete
		}
		*schemas, *names, *events = append(*schemas, n.Schema), append(*names, n.Relation), append(*events, e)
	}
	for i := range n.Plans {
		if err := pgWrites(&n.Plans[i], schemas, names, events, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// postgresTriggers lists the triggers query would fire, planning it (not
// running it) in c's transaction. Planning locks the tables it writes
// until the transaction ends, so no trigger can be added to them before a
// write in the same transaction runs. A statement the database cannot
// plan ahead (DDL, TRUNCATE, COPY, CALL) gives an unknown set; the
// savepoint keeps the transaction usable after that refusal.
func postgresTriggers(ctx context.Context, c *sql.Conn, query string, args []any) (triggerSet, error) {
	if _, err := c.ExecContext(ctx, "SAVEPOINT mcpkit_triggers"); err != nil {
		return triggerSet{}, err
	}
	var plan string
	err := scanOne(ctx, c, "EXPLAIN (VERBOSE, FORMAT JSON) "+query, args, &plan)
	if err != nil {
		if ctx.Err() != nil {
			return triggerSet{}, err
		}
		_, err = c.ExecContext(ctx, "ROLLBACK TO SAVEPOINT mcpkit_triggers; RELEASE SAVEPOINT mcpkit_triggers")
		return triggerSet{}, err
	}
	if _, err := c.ExecContext(ctx, "RELEASE SAVEPOINT mcpkit_triggers"); err != nil {
		return triggerSet{}, err
	}
	var plans []struct {
		Plan pgPlanNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &plans); err != nil {
		return triggerSet{}, fmt.Errorf("reading the statement's plan: %w", err)
	}
	var schemas, names []string
	var events []int
	for i := range plans {
		if err := pgWrites(&plans[i].Plan, &schemas, &names, &events, 0); err != nil {
			return triggerSet{}, fmt.Errorf("reading the statement's plan: %w", err)
		}
	}
	set := triggerSet{known: true}
	if len(names) == 0 {
		return set, nil
	}
	rows, err := c.QueryContext(ctx, pgTriggersFired, schemas, names, events, maxTriggersRead)
	if err != nil {
		return triggerSet{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var t trigger
		var total int64
		if err := rows.Scan(&t.name, &t.table, &t.definition, &t.code, &total); err != nil {
			return triggerSet{}, err
		}
		set.list, set.total = append(set.list, t), int(total)
	}
	return set, rows.Err()
}

// pgChanges is the rows this transaction has inserted, updated or deleted
// so far, in every user table.
const pgChanges = `SELECT COALESCE(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint FROM pg_stat_xact_user_tables`
