package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
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
		if s, ok := StringValue([]byte(id.raw)); ok {
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
	if !jsontext.Value(b).IsValid() {
		return errBadID
	}
	return id.set(b)
}

// set keeps the valid JSON value b as the id, if it is one.
func (id *ID) set(b []byte) error {
	switch b[0] {
	case 'n':
		id.raw = ""
		return nil
	case '"':
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
