package sqlserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// Progressive schema discovery: the search_schema tool finds tables (or
// columns) by name and pattern, at a detail level, a page at a time, so
// that a database of a thousand tables never needs one large answer; the
// schema overview (sql://schema) lists only names and kinds past
// overviewMaxTables tables, and resources/list is paginated by the server.

const (
	toolSearch = "search_schema"
	// overviewMaxTables is the most tables the schema overview describes
	// in full; past it, it names them.
	overviewMaxTables = 100
	// searchMaxLimit caps a search page.
	searchMaxLimit = 200
	// searchDefaultLimit is a page without a limit.
	searchDefaultLimit = 50
	// searchMaxPattern bounds a pattern.
	searchMaxPattern = 200
)

type searchArgs struct {
	Pattern string `json:"pattern,omitempty" description:"Names to find: * any characters, ? one (also SQL's % and _); case is ignored. Default: all" jsonschema:"maxLength=200"`
	Kind    string `json:"kind,omitempty" description:"What to find: table (tables and views, the default) or column" jsonschema:"enum=table|column"`
	Detail  string `json:"detail,omitempty" description:"names (the default), summary (columns with types) or full (keys, indexes, comments)" jsonschema:"enum=names|summary|full"`
	Limit   int    `json:"limit,omitempty" description:"Most matches per page (default 50, at most 200)" jsonschema:"minimum=1,maximum=200"`
	Cursor  string `json:"cursor,omitempty" description:"The next_cursor of an earlier page of the same search"`
}

// searchResult is search_schema's structuredContent.
type searchResult struct {
	Matches    []searchMatch `json:"matches"`
	Total      int           `json:"total" description:"Matches in all pages"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

type searchMatch struct {
	Table  string      `json:"table"`
	Kind   string      `json:"kind,omitempty"`
	Column string      `json:"column,omitempty"`
	Type   string      `json:"type,omitempty"`
	Info   *tableInfo  `json:"info,omitempty"`
	text   string      // the match as text
	col    *columnInfo // kind column: the column
}

const searchCursorPurpose = "mcpkit/sqlserver search cursor"

// globMatcher turns a pattern into a matcher of names, case ignored.
func globMatcher(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return func(string) bool { return true }, nil
	}
	if len(pattern) > searchMaxPattern {
		return nil, fmt.Errorf("the pattern is longer than %d bytes", searchMaxPattern)
	}
	p := strings.ToLower(pattern)
	p = strings.NewReplacer("%", "*", "_", "?", "[", `\[`, "]", `\]`, `\`, `\\`).Replace(p)
	if !strings.ContainsAny(p, "*?") {
		p = "*" + p + "*" // a bare word finds the names containing it
	}
	if _, err := path.Match(p, ""); err != nil {
		return nil, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	return func(name string) bool {
		ok, _ := path.Match(p, strings.ToLower(name))
		return ok
	}, nil
}

func (d *DB) callSearch(ctx context.Context, req *server.CallRequest, in searchArgs) (*protocol.CallToolResult, error) {
	match, err := globMatcher(in.Pattern)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = searchDefaultLimit
	}
	limit = min(limit, searchMaxLimit)
	digest := queryDigest(d.served+"\x00search\x00"+in.Pattern+"\x00"+in.Kind+"\x00"+in.Detail, nil)
	offset := 0
	if in.Cursor != "" {
		b, err := req.Unseal(searchCursorPurpose, in.Cursor)
		n, perr := strconv.Atoi(strings.TrimPrefix(string(b), digest+":"))
		if err != nil || perr != nil || !strings.HasPrefix(string(b), digest+":") || n < 0 {
			return nil, errors.New("invalid cursor: pass the next_cursor of an earlier page of the same search unchanged")
		}
		offset = n
	}
	tables, err := d.listTables(ctx)
	if err != nil {
		return nil, err
	}
	res := &searchResult{Matches: []searchMatch{}}
	if in.Kind == "column" {
		// Columns are read a table at a time, and only as far as the page
		// needs: the total counts the tables read.
		all, err := d.describeAll(ctx, tableNames(tables), false)
		if err != nil {
			return nil, err
		}
		for _, info := range all {
			for i := range info.Columns {
				c := &info.Columns[i]
				if !match(c.Name) {
					continue
				}
				if res.Total >= offset && len(res.Matches) < limit {
					res.Matches = append(res.Matches, searchMatch{Table: info.Name, Column: c.Name, Type: c.Type, col: c})
				}
				res.Total++
			}
		}
	} else {
		var picked []tableRef
		for _, t := range tables {
			if !match(t.Name) && !(t.rel != "" && match(t.rel)) {
				continue
			}
			if res.Total >= offset && len(picked) < limit {
				picked = append(picked, t)
			}
			res.Total++
		}
		var infos []*tableInfo
		if in.Detail == "summary" || in.Detail == "full" {
			if infos, err = d.describeAll(ctx, tableNames(picked), false); err != nil {
				return nil, err
			}
		}
		for i, t := range picked {
			m := searchMatch{Table: t.Name, Kind: t.Kind}
			if infos != nil {
				m.Info = infos[i]
				if in.Detail == "summary" {
					m.Info = summaryOf(infos[i])
				}
			}
			res.Matches = append(res.Matches, m)
		}
	}
	if next := offset + len(res.Matches); next < res.Total {
		if res.NextCursor, err = req.Seal(searchCursorPurpose, []byte(digest+":"+strconv.Itoa(next)), 0); err != nil {
			return nil, protocol.InternalError("sealing a cursor: " + err.Error())
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, protocol.InternalError(err.Error())
	}
	return &protocol.CallToolResult{
		Content:           []protocol.Content{&protocol.TextContent{Text: res.text(offset)}},
		StructuredContent: b,
	}, nil
}

// summaryOf is info with its columns and primary key only.
func summaryOf(info *tableInfo) *tableInfo {
	s := newTableInfo(info.ref)
	s.Comment = info.Comment
	s.Columns = info.Columns
	s.PrimaryKey = info.PrimaryKey
	return s
}

func (r *searchResult) text(offset int) string {
	var b strings.Builder
	for _, m := range r.Matches {
		switch {
		case m.Column != "":
			fmt.Fprintf(&b, "%s.%s %s\n", m.Table, m.Column, m.Type)
		case m.Info != nil:
			b.WriteString(m.Info.text())
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "%s (%s)\n", m.Table, m.Kind)
		}
	}
	if len(r.Matches) == 0 {
		b.WriteString("no matches\n")
	} else {
		fmt.Fprintf(&b, "(matches %d to %d of %d)\n", offset+1, offset+len(r.Matches), r.Total)
	}
	if r.NextCursor != "" {
		fmt.Fprintf(&b, "next_cursor: %s\nTo read on, call search_schema again with the same arguments and cursor set to that next_cursor.\n", r.NextCursor)
	}
	return b.String()
}
