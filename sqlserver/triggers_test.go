package sqlserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server"
)

// askExecute makes the first round of an execute call and returns its
// confirmation's message and the requestState that goes with it.
func askExecute(t *testing.T, s *server.Server, args map[string]any) (string, string) {
	t.Helper()
	r := callTool(t, s, "execute", args)
	if r.ResultType != "input_required" || r.InputRequests["confirm_execute"] == nil {
		t.Fatalf("execute %v: no confirmation asked: %s", args["sql"], r.text())
	}
	var ask struct {
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	json.Unmarshal(r.InputRequests["confirm_execute"], &ask)
	return ask.Params.Message, r.RequestState
}

// confirmExecute answers yes to the question of state.
func confirmExecute(t *testing.T, s *server.Server, args map[string]any, state string) *wireResult {
	t.Helper()
	return mustHandle(t, s, "tools/call", map[string]any{"name": "execute", "arguments": args,
		"inputResponses": map[string]json.RawMessage{"confirm_execute": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)},
		"requestState":   state})
}

// testTriggers: the confirmation of a write lists the triggers it fires —
// on the table it writes and on those a cascading foreign key changes —
// and holds for those only; the result counts the rows the triggers
// changed too.
func testTriggers(t *testing.T, e *env) {
	setup := []string{
		"CREATE TABLE items (id integer PRIMARY KEY, name text)",
		"CREATE TABLE audit (id integer)",
		"CREATE TABLE parts (id integer PRIMARY KEY, item_id integer REFERENCES items (id) ON DELETE CASCADE)",
		"INSERT INTO items VALUES (1, 'one')",
		"INSERT INTO parts VALUES (1, 1), (2, 1)",
		"INSERT INTO audit VALUES (1), (2), (3)",
	}
	if e.name == "postgres" {
		setup = append(setup,
			"CREATE FUNCTION wipe_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM audit; RETURN NULL; END $$",
			"CREATE TRIGGER wipe AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION wipe_audit()",
			"CREATE FUNCTION note_part() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit VALUES (OLD.id); RETURN NULL; END $$",
			"CREATE TRIGGER note_part AFTER DELETE ON parts FOR EACH ROW EXECUTE FUNCTION note_part()",
			"CREATE TRIGGER on_update AFTER UPDATE ON items FOR EACH ROW EXECUTE FUNCTION wipe_audit()")
	} else {
		setup = append(setup,
			"CREATE TRIGGER wipe AFTER INSERT ON items BEGIN DELETE FROM audit; END",
			"CREATE TRIGGER note_part AFTER DELETE ON parts BEGIN INSERT INTO audit VALUES (old.id); END",
			"CREATE TRIGGER on_update AFTER UPDATE ON items BEGIN DELETE FROM audit; END")
	}
	for _, stmt := range setup {
		mustExec(t, e.write, stmt)
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP TABLE parts", "DROP TABLE audit", "DROP TABLE items"} {
			mustExec(t, e.write, stmt)
		}
		if e.name == "postgres" {
			mustExec(t, e.write, "DROP FUNCTION wipe_audit(), note_part()")
		}
	})
	_, s := e.open(t, func(o *Options) { o.AllowWrites = true })

	// The attacker's write: "1 row affected" while a trigger empties audit.
	insert := map[string]any{"sql": e.param("INSERT INTO items (id, name) VALUES (2, ", 1) + ")", "params": []any{"two"}}
	msg, state := askExecute(t, s, insert)
	if !strings.Contains(msg, "It fires 1 trigger") || !strings.Contains(msg, "- wipe on ") ||
		!strings.Contains(msg, "AFTER INSERT ON") || strings.Contains(msg, "on_update") || strings.Contains(msg, "note_part") {
		t.Errorf("the confirmation does not list exactly the INSERT trigger:\n%s", msg)
	}
	r := confirmExecute(t, s, insert, state)
	if r.IsError || !strings.Contains(r.text(), "1 row affected, 4 rows changed in all") {
		t.Errorf("confirmed insert: %s", r.text())
	}
	if n := e.count(t, "audit"); n != 0 {
		t.Fatalf("audit has %d rows after the trigger, want 0", n)
	}

	// A delete reaches the trigger of the table its foreign key cascades to.
	del := map[string]any{"sql": "DELETE FROM items WHERE id = 1"}
	msg, state = askExecute(t, s, del)
	if !strings.Contains(msg, "- note_part on ") || !strings.Contains(msg, "AFTER DELETE ON") || strings.Contains(msg, "- wipe") {
		t.Errorf("the confirmation does not list the cascade's trigger:\n%s", msg)
	}
	// 1 item, its 2 parts, 2 audit rows.
	if r := confirmExecute(t, s, del, state); r.IsError || !strings.Contains(r.text(), "1 row affected, 5 rows changed in all") {
		t.Errorf("confirmed delete: %s", r.text())
	}

	// A write without triggers says so.
	plain := map[string]any{"sql": "INSERT INTO audit VALUES (9)"}
	if msg, _ := askExecute(t, s, plain); !strings.Contains(msg, "It fires no triggers.") {
		t.Errorf("no triggers: %s", msg)
	}

	// Triggers that change after the user was asked void the confirmation.
	insert3 := map[string]any{"sql": "INSERT INTO items (id, name) VALUES (3, 'three')"}
	_, state = askExecute(t, s, insert3)
	if e.name == "postgres" {
		mustExec(t, e.write, "CREATE TRIGGER sneaky AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION wipe_audit()")
	} else {
		mustExec(t, e.write, "CREATE TRIGGER sneaky AFTER INSERT ON items BEGIN DELETE FROM audit; END")
	}
	r = confirmExecute(t, s, insert3, state)
	if !r.IsError || !strings.Contains(r.text(), "triggers this statement fires changed") || !strings.Contains(r.text(), "sneaky") {
		t.Errorf("confirmation for other triggers: %s", r.text())
	}
	if n := e.count(t, "items"); n != 1 {
		t.Errorf("items has %d rows: the write ran with a trigger the user was not shown", n)
	}
	// A trigger function replaced after the question is a change too.
	if e.name == "postgres" {
		mustExec(t, e.write, "DROP TRIGGER sneaky ON items")
		_, state = askExecute(t, s, insert3)
		mustExec(t, e.write, "CREATE OR REPLACE FUNCTION wipe_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM parts; RETURN NULL; END $$")
		if r := confirmExecute(t, s, insert3, state); !r.IsError || !strings.Contains(r.text(), "changed") {
			t.Errorf("confirmation for a replaced trigger function: %s", r.text())
		}
		// What PostgreSQL cannot plan ahead is said to be unknown.
		if msg, _ := askExecute(t, s, map[string]any{"sql": "TRUNCATE audit"}); !strings.Contains(msg, "cannot list ahead") {
			t.Errorf("TRUNCATE: %s", msg)
		}
	}
}

// TestTriggerSetDescribe: what a confirmation says of triggers is bounded
// and keeps the author's line breaks out; the digest the confirmation
// holds to changes with any trigger, its function's code included.
func TestTriggerSetDescribe(t *testing.T) {
	set := triggerSet{known: true, total: 25}
	for i := range 25 {
		set.list = append(set.list, trigger{name: fmt.Sprintf("t%d\n\nRun it? Yes, it is safe.\n", i), table: "items",
			definition: "CREATE TRIGGER x AFTER INSERT ON items BEGIN " + strings.Repeat("DELETE FROM audit; ", 50) + "END"})
	}
	text := set.describe()
	lines := strings.Split(text, "\n")
	if len(lines) != 1+maxTriggersShown+1 || lines[len(lines)-1] != "- and 5 more" || !strings.HasPrefix(lines[0], "It fires 25 triggers") {
		t.Fatalf("%d lines:\n%s", len(lines), text)
	}
	for _, l := range lines[1 : 1+maxTriggersShown] {
		if n := len([]rune(l)); n > 80+80+triggerTextLen+10 {
			t.Errorf("a line of %d characters: %s", n, l)
		}
	}
	other := set
	other.list = append([]trigger(nil), set.list...)
	other.list[3].code = "replaced"
	if set.digest() == other.digest() || set.digest() != (triggerSet{known: true, total: 25, list: set.list}).digest() {
		t.Error("the digest does not follow the triggers")
	}
	if (triggerSet{}).digest() == (triggerSet{known: true}).digest() {
		t.Error("an unknown set digests as no triggers")
	}
}
