package schema

import (
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
)

// kind classifies a JSON instance value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kObject
	kArray
	kInvalid
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kNumber:
		return "number"
	case kString:
		return "string"
	case kObject:
		return "object"
	case kArray:
		return "array"
	}
	return "unsupported value"
}

// kindOf reports the JSON kind of a decoded instance value. Values that are
// not one of the encoding/json decoding types (or plain Go numbers) yield kInvalid.
func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kNull
	case bool:
		return kBool
	case string:
		return kString
	case float64, json.Number, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return kNumber
	case map[string]any:
		return kObject
	case []any:
		return kArray
	}
	return kInvalid
}

// normalize converts an arbitrary Go value into the generic form produced by
// encoding/json decoding (with UseNumber) by round-tripping it through JSON.
func normalize(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseValue(data)
}

// toFloat returns the numeric value of a number instance and, when the value
// is a json.Number, its literal text.
func toFloat(v any) (f float64, lit string, ok bool) {
	switch n := v.(type) {
	case float64:
		return n, "", true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !isRangeErr(err) {
			return 0, "", false
		}
		return f, string(n), true
	case float32:
		return float64(n), "", true
	case int:
		return float64(n), "", true
	case int8:
		return float64(n), "", true
	case int16:
		return float64(n), "", true
	case int32:
		return float64(n), "", true
	case int64:
		return float64(n), "", true
	case uint:
		return float64(n), "", true
	case uint8:
		return float64(n), "", true
	case uint16:
		return float64(n), "", true
	case uint32:
		return float64(n), "", true
	case uint64:
		return float64(n), "", true
	}
	return 0, "", false
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// isInteger reports whether f has no fractional part.
func isInteger(f float64) bool {
	return !math.IsNaN(f) && f == math.Trunc(f)
}

// numRat converts a number to an exact rational, using the decimal literal
// when available so that 0.1 means one tenth rather than its binary value.
func numRat(f float64, lit string) (*big.Rat, bool) {
	if lit == "" {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		lit = strconv.FormatFloat(f, 'g', -1, 64)
	}
	r, ok := new(big.Rat).SetString(lit)
	return r, ok
}

// isMultipleOf reports whether v is an integer multiple of m (m > 0).
func isMultipleOf(v float64, vlit string, m float64, mlit string) bool {
	q := v / m
	if !math.IsInf(q, 0) && !math.IsNaN(q) && q == math.Trunc(q) {
		return true
	}
	rv, ok1 := numRat(v, vlit)
	rm, ok2 := numRat(m, mlit)
	if !ok1 || !ok2 || rm.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(rv, rm).IsInt()
}

// numEqual compares two numbers numerically, falling back to exact
// arithmetic for large values that float64 cannot distinguish.
func numEqual(a, b any) bool {
	fa, la, _ := toFloat(a)
	fb, lb, _ := toFloat(b)
	if fa != fb {
		return false
	}
	if la == "" || lb == "" || la == lb || math.Abs(fa) < 1<<53 {
		return true
	}
	ra, ok1 := numRat(fa, la)
	rb, ok2 := numRat(fb, lb)
	if !ok1 || !ok2 {
		return true
	}
	return ra.Cmp(rb) == 0
}

// jsonEqual reports JSON equality: numbers compare numerically and objects
// compare without regard to key order.
func jsonEqual(a, b any) bool {
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return false
	}
	switch ka {
	case kNull:
		return true
	case kBool:
		return a.(bool) == b.(bool)
	case kString:
		return a.(string) == b.(string)
	case kNumber:
		return numEqual(a, b)
	case kArray:
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case kObject:
		x, y := a.(map[string]any), b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// uniqueSmall is the array length up to which uniqueness is checked pairwise.
const uniqueSmall = 32

// allUnique reports whether no two elements of arr are JSON-equal, returning
// the indexes of the first duplicate pair found otherwise.
func allUnique(arr []any) (bool, int, int) {
	if len(arr) <= uniqueSmall {
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if jsonEqual(arr[i], arr[j]) {
					return false, i, j
				}
			}
		}
		return true, 0, 0
	}
	seen := make(map[string]int, len(arr))
	var buf []byte
	for i, v := range arr {
		buf = canonical(buf[:0], v)
		if j, ok := seen[string(buf)]; ok {
			return false, j, i
		}
		seen[string(buf)] = i
	}
	return true, 0, 0
}

// canonical appends a representation of v in which JSON-equal values are
// byte-identical: numbers are normalized and object keys sorted.
func canonical(buf []byte, v any) []byte {
	switch kindOf(v) {
	case kNull:
		return append(buf, 'n')
	case kBool:
		if v.(bool) {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case kString:
		return strconv.AppendQuote(append(buf, 's'), v.(string))
	case kNumber:
		f, lit, _ := toFloat(v)
		buf = append(buf, 'd')
		if lit != "" && math.Abs(f) >= 1<<53 {
			if r, ok := numRat(f, lit); ok {
				return append(buf, r.RatString()...)
			}
		}
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	case kArray:
		buf = append(buf, '[')
		for _, e := range v.([]any) {
			buf = append(canonical(buf, e), ',')
		}
		return append(buf, ']')
	case kObject:
		m := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf = append(buf, '{')
		for _, k := range keys {
			buf = strconv.AppendQuote(buf, k)
			buf = append(canonical(append(buf, ':'), m[k]), ',')
		}
		return append(buf, '}')
	}
	return append(buf, '?')
}
