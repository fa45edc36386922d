package sqlserver

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// stmtError is a failed statement as a tool reports it: the database's
// message as psql shows it (severity, SQLSTATE, DETAIL, HINT, and the
// line of the statement where it went wrong with a caret under the spot),
// with what to do where a refusal has a remedy.
type stmtError struct {
	msg string
	err error
}

func (e *stmtError) Error() string { return e.msg }
func (e *stmtError) Unwrap() error { return e.err }

// optionNames are the Options fields messages name beside a flag.
var optionNames = regexp.MustCompile(` / Options\.[A-Za-z]+`)

// present turns err, from a call running sql, into what the tool reports
// (see stmtError); with Options.FlagNames, messages name flags only.
func (d *DB) present(err error, sql string) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	var se *sqlite.Error
	switch {
	case errors.As(err, &pe):
		err = &stmtError{msg: "database error: " + pgErrorText(pe, sql) + d.remedy(pe.Code, pe.Message), err: err}
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY:
		err = &stmtError{msg: err.Error() + d.remedy("25006", ""), err: err}
	}
	if d.opts.FlagNames && optionNames.MatchString(err.Error()) {
		err = &stmtError{msg: optionNames.ReplaceAllString(err.Error(), ""), err: err}
	}
	return err
}

// remedy says what to do about a refusal, by SQLSTATE.
func (d *DB) remedy(code, msg string) string {
	switch {
	case code == "25006": // read_only_sql_transaction
		if d.rw != nil {
			return "\nThe query tool only reads: run writes with the execute tool, which asks the user to confirm them."
		}
		return "\nThe query tool only reads, and this server offers no writes: they need the execute tool, " +
			"which `mcpkit serve sql --allow-writes` (Options.AllowWrites) adds, asking the user to confirm each write."
	case code == "42601" && strings.Contains(msg, "multiple commands"):
		return "\nOnly one statement runs per call: send each statement in a call of its own."
	}
	return ""
}

// pgErrorText renders a PostgreSQL error as psql does.
func pgErrorText(pe *pgconn.PgError, sql string) string {
	var b strings.Builder
	sev := pe.Severity
	if sev == "" {
		sev = "ERROR"
	}
	fmt.Fprintf(&b, "%s: %s (SQLSTATE %s)", sev, pe.Message, pe.Code)
	if pe.Position > 0 {
		b.WriteString(positionText(sql, int(pe.Position)))
	}
	if pe.Detail != "" {
		b.WriteString("\nDETAIL: " + pe.Detail)
	}
	if pe.Hint != "" {
		b.WriteString("\nHINT: " + pe.Hint)
	}
	return b.String()
}

// positionText shows the line of sql holding the 1-based character pos,
// with a caret under it: "LINE 2: FROM tabel" and "        ^".
func positionText(sql string, pos int) string {
	runes := []rune(sql)
	if pos < 1 || pos > len(runes)+1 {
		return ""
	}
	at := pos - 1
	line, start := 1, 0
	for i := 0; i < at && i < len(runes); i++ {
		if runes[i] == '\n' {
			line++
			start = i + 1
		}
	}
	end := start
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	text := runes[start:end]
	col := at - start
	// Long lines are cut around the spot, as psql does.
	const width = 60
	prefix := ""
	if col > width {
		cut := col - width/2
		text, col, prefix = text[cut:], col-cut, "..."
	}
	if len(text) > width*2 {
		text = append(text[:width*2:width*2], []rune("...")...)
	}
	head := fmt.Sprintf("LINE %d: %s", line, prefix)
	return "\n" + head + strings.ReplaceAll(string(text), "\t", " ") + "\n" + strings.Repeat(" ", len([]rune(head))+col) + "^"
}
