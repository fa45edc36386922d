package jsonrpc

import (
	"encoding/json"
	"errors"
)

var errScan = errors.New("malformed JSON object")

// Members calls fn for each top-level member of the JSON object obj, in
// order, with the member's decoded key and its raw value. It stops early when
// fn returns false. obj must be valid JSON (as after Decode). Each key is one
// string allocation; Member allocates nothing for keys without escapes.
func Members(obj []byte, fn func(key string, value []byte) bool) error {
	bad := false
	err := rawMembers(obj, func(rawKey []byte, escaped bool, value []byte) bool {
		key, ok := decodeKey(rawKey, escaped)
		if !ok {
			bad = true
			return false
		}
		return fn(key, value)
	})
	if bad {
		return errScan
	}
	return err
}

// Member returns the raw value of the top-level member key of obj, or nil.
func Member(obj []byte, key string) []byte {
	var out []byte
	_ = rawMembers(obj, func(rawKey []byte, escaped bool, v []byte) bool {
		if !escaped {
			if string(rawKey[1:len(rawKey)-1]) == key {
				out = v
				return false
			}
			return true
		}
		if k, ok := decodeKey(rawKey, true); ok && k == key {
			out = v
			return false
		}
		return true
	})
	return out
}

// RawMembers calls fn for each top-level member of the JSON object obj, in
// order, with the member's decoded key and its raw value, both valid only
// during the call (the key may alias obj). It stops early when fn returns
// false. Unlike Members it allocates nothing for keys without escapes.
func RawMembers(obj []byte, fn func(key, value []byte) bool) error {
	bad := false
	err := rawMembers(obj, func(rawKey []byte, escaped bool, value []byte) bool {
		key := rawKey[1 : len(rawKey)-1]
		if escaped {
			k, ok := decodeKey(rawKey, true)
			if !ok {
				bad = true
				return false
			}
			key = []byte(k)
		}
		return fn(key, value)
	})
	if bad {
		return errScan
	}
	return err
}

// decodeKey returns the value of the JSON string rawKey (quotes included).
func decodeKey(rawKey []byte, escaped bool) (string, bool) {
	if !escaped {
		return string(rawKey[1 : len(rawKey)-1]), true
	}
	var key string
	if json.Unmarshal(rawKey, &key) != nil {
		return "", false
	}
	return key, true
}

// rawMembers calls fn for each top-level member of obj with the key's JSON
// text (quotes included), whether that text has escapes, and the raw value.
func rawMembers(obj []byte, fn func(rawKey []byte, escaped bool, value []byte) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errScan
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return errScan
		}
		kend, escaped := scanString(obj, i)
		if kend < 0 {
			return errScan
		}
		rawKey := obj[i:kend]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return errScan
		}
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		if vend < 0 {
			return errScan
		}
		if !fn(rawKey, escaped, obj[i:vend]) {
			return nil
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return errScan
		}
		if obj[i] == '}' {
			return nil
		}
		if obj[i] != ',' {
			return errScan
		}
		i = skipSpace(obj, i+1)
	}
	return errScan
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just past the string starting at b[i] and
// whether it contains escapes; -1 if unterminated.
func scanString(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, false
}

func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := scanString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
