package sqlserver

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
)

// Values are returned as JSON values of their own kind: numbers, strings,
// booleans and null; JSON columns as the JSON value they hold; PostgreSQL
// arrays as JSON arrays; numeric as an exact JSON number; timestamps as
// RFC 3339 strings; and binary values (bytea, SQLite BLOB) as an object
// {"base64": "..."} so that they are never mistaken for text.

// binaryValue is a binary value in results.
type binaryValue struct {
	Base64 string `json:"base64"`
}

// converter turns the values of one result column into JSON values.
type converter func(v any) any

// converterFor returns the converter for a column of the database type
// typ (as database/sql names it, upper case; "" when unknown). arrays
// decodes PostgreSQL array text; it is made on first use.
func converterFor(typ string, arrays *pgArrays) converter {
	switch {
	case typ == "JSON" || typ == "JSONB":
		return func(v any) any { return jsonColumnValue(v) }
	case typ == "NUMERIC" || typ == "DECIMAL":
		return func(v any) any { return numericValue(v) }
	case typ == "DATE":
		return func(v any) any { return dateValue(jsonValue(v)) }
	case typ == "_DATE":
		return func(v any) any { return dateValue(arrays.decode(typ, v)) }
	case strings.HasPrefix(typ, "_"):
		return func(v any) any { return arrays.decode(typ, v) }
	}
	return jsonValue
}

// dateValue shortens the midnight timestamps of a date column (or array)
// to dates.
func dateValue(v any) any {
	switch x := v.(type) {
	case string:
		if d, ok := strings.CutSuffix(x, "T00:00:00Z"); ok && len(d) == len("2006-01-02") {
			return d
		}
	case []any:
		for i := range x {
			x[i] = dateValue(x[i])
		}
	}
	return v
}

// jsonValue turns a database value into one JSON encodes faithfully.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, string, json.RawMessage, json.Number, binaryValue:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case float32:
		return jsonValue(float64(x))
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case int:
		return int64(x)
	case []byte:
		return binaryValue{Base64: base64.StdEncoding.EncodeToString(x)}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case [16]byte: // a UUID inside an array
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		return x
	case json.Marshaler:
		if b, err := x.MarshalJSON(); err == nil && json.Valid(b) {
			return json.RawMessage(b)
		}
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonColumnValue returns the JSON a json or jsonb column holds.
func jsonColumnValue(v any) any {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		return jsonValue(v)
	}
	if !json.Valid(b) {
		return string(b)
	}
	return json.RawMessage(append([]byte(nil), b...))
}

// numericValue returns a numeric as an exact JSON number; NaN and the
// infinities stay strings.
func numericValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return jsonValue(v)
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "nNiI") {
		return s
	}
	return json.Number(s)
}

// pgArrays decodes PostgreSQL arrays from their text form with pgx's type
// map, which knows the element types.
type pgArrays struct {
	m *pgtype.Map
}

func (a *pgArrays) decode(typ string, v any) any {
	s, ok := v.(string)
	if !ok {
		return jsonValue(v)
	}
	if a.m == nil {
		a.m = pgtype.NewMap()
	}
	t, ok := a.m.TypeForName(strings.ToLower(typ))
	if !ok {
		return s
	}
	out, err := t.Codec.DecodeValue(a.m, t.OID, pgtype.TextFormatCode, []byte(s))
	if err != nil {
		return s
	}
	return jsonValue(out)
}

// cellText renders a value for a text table.
func cellText(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "NULL"
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case binaryValue:
		b, _ := base64.StdEncoding.DecodeString(x.Base64)
		s = fmt.Sprintf("<%d bytes> \\x%s", len(b), hex.EncodeToString(b[:min(len(b), 16)]))
	case json.RawMessage:
		s = string(x)
	case []any, map[string]any:
		b, _ := json.Marshal(x)
		s = string(b)
	default:
		s = fmt.Sprint(x)
	}
	return cellString(s)
}

// cellEscaper shows line breaks and tabs in a cell on one line.
var cellEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", " ")

// cellString fits s in a text-table cell: on one line, at most maxCell
// characters.
func cellString(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = cellEscaper.Replace(s)
	}
	if len(s) <= maxCell {
		return s
	}
	if len(s) > 4*maxCell && utf8.RuneCountInString(s) > maxCell {
		s = string([]rune(s[:4*maxCell]))
	}
	if utf8.RuneCountInString(s) > maxCell {
		r := []rune(s)
		s = string(r[:maxCell-1]) + "…"
	}
	return s
}
