package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestReadJSON: what servers send the client (metadata, registrations,
// token responses) is read with the one JSON policy and within a bound.
func TestReadJSON(t *testing.T) {
	type token struct {
		AccessToken string `json:"access_token"`
	}
	var tok token
	err := readJSON(strings.NewReader(`{"access_token":"a","access_token":"b"}`), &tok)
	var se *jsonrpc.SyntaxError
	if !errors.As(err, &se) || !se.Duplicate {
		t.Errorf("a repeated access_token: err %v, token %q", err, tok.AccessToken)
	}
	tok = token{}
	if err := readJSON(strings.NewReader(`{"Access_Token":"a"}`), &tok); err != nil || tok.AccessToken != "" {
		t.Errorf("a member of another case filled the field: err %v, token %q", err, tok.AccessToken)
	}
	big := `{"access_token":"` + strings.Repeat("x", maxMetadata) + `"}`
	if err := readJSON(strings.NewReader(big), &tok); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("a response over the bound: err %v", err)
	}
	if err := readJSON(strings.NewReader(`{"access_token":"ok"}`), &tok); err != nil || tok.AccessToken != "ok" {
		t.Errorf("a plain response: err %v, token %q", err, tok.AccessToken)
	}
}

// TestExpiresIn: expires_in is read as all peer JSON is, as a number of
// seconds or a string holding one, and anything else gives no expiry.
func TestExpiresIn(t *testing.T) {
	for raw, want := range map[string]float64{
		`3600`:         3600,
		`"3600"`:       3600,
		`1.5`:          1.5,
		`"1e3"`:        1000,
		``:             0,
		`0`:            0,
		`-5`:           0,
		`"-5"`:         0,
		`"soon"`:       0,
		`"3600"x`:      0,
		`"\"3600\""`:   0,
		`"3600`:        0,
		`["3600"]`:     0,
		`1e300`:        0,
		`"\u0033600"`:  3600,
		"\"36\xff00\"": 0,
	} {
		secs, ok := expiresIn([]byte(raw))
		if ok != (want > 0) || secs != want && ok {
			t.Errorf("expiresIn(%s) = %v, %v; want %v", raw, secs, ok, want)
		}
	}
}
