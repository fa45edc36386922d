package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/suitedata"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// suiteExceptions are the JSONTestSuite files whose expected answer (y_:
// accepted, n_: refused) every reader deliberately does not give, and why.
// The test fails if one of them gets the expected answer again.
var suiteExceptions = map[string]string{
	"y_object_duplicated_key.json":           "a member name repeated in an object is refused: RFC 8259 says names SHOULD be unique, and readers disagree on which member counts",
	"y_object_duplicated_key_and_value.json": "a member name repeated in an object is refused, even with the same value",
}

// notWrappable are the files left out of the jsonrpc.Decode leg, which
// reads each document as the only element of the params array of a
// request: for these, wrapping changes whether the text is valid JSON.
// The test checks that it does.
var notWrappable = map[string]string{
	"n_structure_no_data.json": "an empty document: wrapped, it is the empty array []",
	"n_single_space.json":      "only white space: wrapped, it is the empty array [ ]",
}

// suiteDir finds JSONTestSuite's test_parsing folder, kept next to the
// project: ../shared/testdata/jsontestsuite/test_parsing from the
// directory holding go.mod.
func suiteDir(t *testing.T) string {
	return suitedata.Dir(t, filepath.Join("jsontestsuite", "test_parsing"))
}

// suiteStruct is a small struct for the readers that decode into one.
type suiteStruct struct {
	A any      `json:"a"`
	N *float64 `json:"n"`
}

// A suiteReader reads a document as mcpkit reads peer data. It reports
// whether it refused the document as not acceptable JSON text. A value
// that does not fit the reader's Go type is not a refusal, but decoding
// stops there, before the rest of the text is read: the reader then gives
// errNoAnswer, with a note saying why.
type suiteReader struct {
	name string
	read func(doc []byte) (refused bool, note string, err error)
}

var errNoAnswer = errors.New("no answer")

// classify sorts an Unmarshal error: a refusal (a *jsonrpc.SyntaxError),
// a type error (no answer, noted), or an unexpected error.
func classify(err error) (bool, string, error) {
	var te *jsonv2.SemanticError
	switch {
	case err == nil:
		return false, "", nil
	case errors.As(err, new(*jsonrpc.SyntaxError)):
		return true, "", nil
	case errors.As(err, &te):
		return false, "type error: " + te.Error(), errNoAnswer
	}
	return false, "", err
}

func unmarshalInto[T any](doc []byte) (bool, string, error) {
	var v T
	return classify(jsonrpc.Unmarshal(doc, &v))
}

// wrap makes doc the only element of the params of a request.
func wrap(doc []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":[` + string(doc) + `]}`)
}

// decodeWrapped reads doc as the params of a request. Decode refuses what
// is not JSON text as a parse error, and JSON text repeating a member name
// as an invalid request (with the request's id).
func decodeWrapped(doc []byte) (bool, string, error) {
	m, err := jsonrpc.Decode(wrap(doc))
	var je *jsonrpc.Error
	switch {
	case err == nil:
		return false, "", nil
	case errors.As(err, &je) && je.Code == jsonrpc.CodeParseError:
		return true, "", nil
	case errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(je.Message, "invalid params: duplicate member") &&
		m != nil && string(m.ID.Raw()) == "1":
		return true, "", nil
	}
	return false, "", err
}

var suiteReaders = []suiteReader{
	{"jsonrpc.Unmarshal(jsontext.Value)", unmarshalInto[jsontext.Value]},
	{"jsonrpc.Unmarshal(any)", unmarshalInto[any]},
	{"jsonrpc.Unmarshal(struct)", unmarshalInto[suiteStruct]},
	{"jsonrpc.Unmarshal([]struct)", unmarshalInto[[]suiteStruct]},
	{"jsonrpc.Unmarshal(map)", unmarshalInto[map[string]any]},
	{"jsonrpc.Unmarshal(RawMessage)", unmarshalInto[json.RawMessage]},
	{"jsonrpc.EachMember", eachMember},
	{"jsonrpc.Decode(wrapped)", decodeWrapped},
}

// eachMember reads an object document with EachMember.
func eachMember(doc []byte) (bool, string, error) {
	if jsontext.Value(doc).Kind() != '{' {
		return false, "", errNoAnswer
	}
	return classify(jsonrpc.EachMember(doc, func([]byte, jsontext.Value) error { return nil }))
}

// TestJSONTestSuite runs every document of JSONTestSuite's test_parsing
// through every reader of client-sent JSON: y_ documents must be accepted
// and n_ documents refused (but for suiteExceptions), and i_ documents,
// which parsers may accept or refuse, must get the same answer from all.
func TestJSONTestSuite(t *testing.T) {
	dir := suiteDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no documents in %s: %v", dir, err)
	}
	sort.Strings(files)
	counts := map[string]int{}
	var implementationDefined []string
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Each reader's answer; all must agree.
		var refused *bool
		var notes []string
		for _, r := range suiteReaders {
			if r.name == "jsonrpc.Decode(wrapped)" && notWrappable[name] != "" {
				seen[name] = true
				wrappedOK := jsontext.Value(wrap(doc)).IsValid()
				docOK := jsontext.Value(doc).IsValid()
				if wrappedOK == docOK {
					t.Errorf("%s: listed in notWrappable, but wrapping it does not change the answer", name)
				}
				continue
			}
			got, note, err := r.read(doc)
			if note != "" && strings.Contains(r.name, "(any)") {
				// Into any, a type error is about the value itself (a
				// number out of range); elsewhere it is about its shape.
				notes = append(notes, r.name+": "+note)
			}
			if err == errNoAnswer {
				continue
			}
			if err != nil {
				t.Errorf("%s: %s: unexpected error %v", name, r.name, err)
				continue
			}
			if refused == nil {
				refused = &got
			} else if got != *refused {
				t.Errorf("%s: %s refused=%v, %s refused=%v", name, r.name, got, suiteReaders[0].name, *refused)
			}
		}
		if refused == nil {
			continue
		}
		answer := "accepted"
		if *refused {
			answer = "refused"
		}
		kind := name[:1]
		counts[kind+" "+answer]++
		reason, excepted := suiteExceptions[name]
		if excepted {
			seen[name] = true
		}
		switch {
		case kind == "i":
			detail := ""
			if len(notes) > 0 {
				detail = " (" + strings.Join(notes, "; ") + ")"
			}
			implementationDefined = append(implementationDefined, fmt.Sprintf("%s: %s by all%s", name, answer, detail))
		case excepted && (kind == "y") != *refused:
			t.Errorf("%s: %s by all, as the suite expects, but listed as an exception (%s)", name, answer, reason)
		case !excepted && (kind == "y") == *refused:
			t.Errorf("%s: %s by all", name, answer)
		}
	}
	for name := range suiteExceptions {
		if !seen[name] {
			t.Errorf("exception %s: no such document", name)
		}
	}
	for name := range notWrappable {
		if !seen[name] {
			t.Errorf("notWrappable %s: no such document", name)
		}
	}
	t.Logf("%d documents: %v", len(files), counts)
	for _, line := range implementationDefined {
		t.Log(line)
	}
}
