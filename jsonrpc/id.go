package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// ID is a JSON-RPC request id: a string or an integer. The zero ID is absent.
// An ID keeps the exact JSON text it was decoded from, so it is echoed back
// byte for byte and can be used as a map key.
type ID struct {
	raw string // JSON text: `"abc"` or `42`; empty when absent
}

// StringID returns an ID holding the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IntID returns an ID holding the integer n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.raw != "" }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return id.raw != "" && id.raw[0] == '"' }

// String returns the ID as text: the string value for a string ID, the decimal
// form for a number, and "" when absent.
func (id ID) String() string {
	if id.IsString() {
		var s string
		if json.Unmarshal([]byte(id.raw), &s) == nil {
			return s
		}
	}
	return id.raw
}

// Raw returns the ID's JSON text ("null" when absent).
func (id ID) Raw() []byte {
	if id.raw == "" {
		return []byte("null")
	}
	return []byte(id.raw)
}

func (id ID) appendRaw(dst []byte) []byte {
	if id.raw == "" {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}

// MarshalJSON encodes the ID; an absent ID encodes as null.
func (id ID) MarshalJSON() ([]byte, error) { return id.Raw(), nil }

var errBadID = errors.New("id must be a string or an integer")

// UnmarshalJSON decodes a string or integer id. null leaves the ID absent;
// any other JSON value is an error.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errBadID
	}
	switch b[0] {
	case 'n':
		if string(b) != "null" {
			return errBadID
		}
		id.raw = ""
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return errBadID
		}
		id.raw = string(b)
		return nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		for _, c := range b[1:] {
			if c < '0' || c > '9' {
				// Fractions and exponents are not integers.
				return errBadID
			}
		}
		id.raw = string(b)
		return nil
	}
	return errBadID
}
