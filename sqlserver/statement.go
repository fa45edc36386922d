package sqlserver

import (
	"errors"
	"strings"
)

// SQLite runs every statement of a script it is given (the driver steps
// each one and returns the last one's rows), so the SQLite dialect counts
// the statements of a tool's SQL itself and refuses more than one.
// PostgreSQL needs no such check: the extended protocol, which every
// statement from a tool goes through, takes exactly one statement.
//
// The count follows SQLite's own statement boundaries as sqlite3_complete
// finds them: a semicolon ends a statement unless it is inside a string,
// a quoted identifier or a comment, or inside the BEGIN ... END body of a
// CREATE TRIGGER. sqliteStatements agrees with sqlite3_complete on every
// prefix (TestStatementsAgreeWithSQLite checks it against the library).

// Tokens of the boundary scanner.
const (
	tokSemi = iota
	tokSpace
	tokOther
	tokExplain
	tokCreate
	tokTemp
	tokTrigger
	tokEnd
)

// States of the boundary scanner; stStart follows a complete statement.
const (
	stInvalid = iota
	stStart
	stNormal
	stExplain
	stCreate
	stTrigger
	stSemi
	stEnd
)

// boundary[state][token] is the next state.
var boundary = [8][8]uint8{
	//             semi     space      other     explain    create    temp      trigger    end
	stInvalid: {stStart, stInvalid, stNormal, stExplain, stCreate, stNormal, stNormal, stNormal},
	stStart:   {stStart, stStart, stNormal, stExplain, stCreate, stNormal, stNormal, stNormal},
	stNormal:  {stStart, stNormal, stNormal, stNormal, stNormal, stNormal, stNormal, stNormal},
	stExplain: {stStart, stExplain, stExplain, stNormal, stCreate, stNormal, stNormal, stNormal},
	stCreate:  {stStart, stCreate, stNormal, stNormal, stNormal, stCreate, stTrigger, stNormal},
	stTrigger: {stSemi, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger},
	stSemi:    {stSemi, stSemi, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger, stEnd},
	stEnd:     {stStart, stEnd, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger, stTrigger},
}

// sqliteIDChar reports whether c may appear in an SQLite identifier.
func sqliteIDChar(c byte) bool {
	return c >= 0x80 || c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// scanSQLite walks the tokens of sql, calling visit with each token's kind
// and the state it leads to. An unterminated comment is white space to the
// end of the input, an unterminated string or quoted identifier a token to
// the end; like sqlite3_complete, it then reports the input unterminated.
func scanSQLite(sql string, visit func(tok int, state uint8)) (terminated bool) {
	state := uint8(stInvalid)
	for i := 0; i < len(sql); {
		c := sql[i]
		tok := tokOther
		next := i + 1
		// closing finds the end of a construct that ends with close, or
		// marks the input unterminated.
		closing := func(from int, close string) {
			if end := strings.Index(sql[from:], close); end >= 0 {
				next = from + end + len(close)
			} else {
				next, terminated = len(sql), false
			}
		}
		terminated = true
		switch {
		case c == ';':
			tok = tokSemi
		case c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
			tok = tokSpace
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			tok = tokSpace
			closing(i+2, "*/")
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			tok = tokSpace
			closing(i+2, "\n")
		case c == '[':
			closing(i+1, "]")
		case c == '`' || c == '"' || c == '\'':
			// A doubled quote inside is an escaped one: scanning on from
			// the closing quote finds the next string at once.
			closing(i+1, string(c))
		case sqliteIDChar(c):
			for next < len(sql) && sqliteIDChar(sql[next]) {
				next++
			}
			tok = keywordToken(sql[i:next])
		}
		i = next
		state = boundary[state][tok]
		visit(tok, state)
		if !terminated {
			return false
		}
	}
	return true
}

func keywordToken(word string) int {
	switch {
	case strings.EqualFold(word, "create"):
		return tokCreate
	case strings.EqualFold(word, "trigger"):
		return tokTrigger
	case strings.EqualFold(word, "temp"), strings.EqualFold(word, "temporary"):
		return tokTemp
	case strings.EqualFold(word, "end"):
		return tokEnd
	case strings.EqualFold(word, "explain"):
		return tokExplain
	}
	return tokOther
}

// sqliteComplete reports what sqlite3_complete reports for sql: whether it
// ends with a complete statement.
func sqliteComplete(sql string) bool {
	var last uint8
	if !scanSQLite(sql, func(_ int, st uint8) { last = st }) {
		return false
	}
	return last == stStart
}

// sqliteStatements returns how many statements sql holds: a run of tokens
// other than white space, comments and semicolons, up to the semicolon
// that completes it or the end of the input.
func sqliteStatements(sql string) int {
	n := 0
	open := false // some token of the current statement was seen
	scanSQLite(sql, func(tok int, st uint8) {
		switch {
		case tok == tokSpace:
		case tok == tokSemi && st == stStart:
			if open {
				n++
			}
			open = false
		default:
			open = true
		}
	})
	if open {
		n++
	}
	return n
}

var (
	errNoStatement    = errors.New("the SQL holds no statement")
	errManyStatements = errors.New("the SQL holds more than one statement; send one statement per call")
	errNUL            = errors.New("the SQL contains a NUL character")
)

// oneSQLiteStatement refuses SQL that is not exactly one statement.
func oneSQLiteStatement(sql string) error {
	if strings.IndexByte(sql, 0) >= 0 {
		// SQLite would read the text only up to the NUL.
		return errNUL
	}
	switch sqliteStatements(sql) {
	case 0:
		return errNoStatement
	case 1:
		return nil
	}
	return errManyStatements
}
