package jsonrpc

import (
	"strings"
	"testing"
)

type member struct{ key, value string }

func collect(t *testing.T, obj string, stopAfter int) ([]member, error) {
	t.Helper()
	var got []member
	err := Members([]byte(obj), func(k string, v []byte) bool {
		got = append(got, member{k, string(v)})
		return stopAfter == 0 || len(got) < stopAfter
	})
	return got, err
}

func TestMembers(t *testing.T) {
	tests := []struct {
		name    string
		obj     string
		stop    int // stop after this many members; 0: never
		want    []member
		wantErr bool
	}{
		{name: "empty", obj: `{}`},
		{name: "empty with space", obj: " { \n\t} "},
		{name: "scalars", obj: `{"a":1,"b":"two","c":true,"d":null,"e":-1.5e3}`,
			want: []member{{"a", "1"}, {"b", `"two"`}, {"c", "true"}, {"d", "null"}, {"e", "-1.5e3"}}},
		{name: "nested", obj: `{"o":{"x":[1,{"y":"}"}],"z":{}},"a":[[],["]"]],"n":0}`,
			want: []member{{"o", `{"x":[1,{"y":"}"}],"z":{}}`}, {"a", `[[],["]"]]`}, {"n", "0"}}},
		{name: "whitespace everywhere", obj: "\r\n{ \"a\" :\t1 ,\n \"b\" : [ 1 , 2 ] ,\"c\":{ } }\n",
			want: []member{{"a", "1"}, {"b", "[ 1 , 2 ]"}, {"c", "{ }"}}},
		{name: "escaped keys", obj: `{"a\"b":1,"\u005fmeta":2,"back\\slash":3,"\u00e9":4}`,
			want: []member{{`a"b`, "1"}, {"_meta", "2"}, {`back\slash`, "3"}, {"é", "4"}}},
		{name: "escapes inside values", obj: `{"s":"quote \" brace } bracket ] backslash \\","t":["\\\"",{"k":"\\"}]}`,
			want: []member{{"s", `"quote \" brace } bracket ] backslash \\"`}, {"t", `["\\\"",{"k":"\\"}]`}}},
		{name: "duplicates kept in order", obj: `{"a":1,"a":2}`, want: []member{{"a", "1"}, {"a", "2"}}},
		{name: "stop early", obj: `{"a":1,"b":2,"c":3}`, stop: 2, want: []member{{"a", "1"}, {"b", "2"}}},
		{name: "stop at first", obj: `{"a":{"deep":[1,2]},"b":2}`, stop: 1, want: []member{{"a", `{"deep":[1,2]}`}}},
		{name: "not an object", obj: `[1,2]`, wantErr: true},
		{name: "string", obj: `"a"`, wantErr: true},
		{name: "empty input", obj: ``, wantErr: true},
		{name: "unterminated", obj: `{"a":1`, want: []member{{"a", "1"}}, wantErr: true},
		{name: "missing colon", obj: `{"a" 1}`, wantErr: true},
		{name: "missing value", obj: `{"a":}`, wantErr: true},
		{name: "unterminated key", obj: `{"a`, wantErr: true},
		{name: "key not a string", obj: `{a:1}`, wantErr: true},
		{name: "unterminated nested", obj: `{"a":{"b":1}`, want: []member{{"a", `{"b":1}`}}, wantErr: true},
		{name: "unterminated nested value", obj: `{"a":{"b":1`, wantErr: true},
		{name: "bad escape in key", obj: `{"\x":1}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(t, tt.obj, tt.stop)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Members(%s) error = %v, wantErr %v", tt.obj, err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Members(%s) = %q, want %q", tt.obj, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("member %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestMember(t *testing.T) {
	obj := `{"name":"echo","_meta":{"progressToken":1,"name":"inner"},"arguments":{"text":"hi"},"\u006be\u0079":1,"k\"ey":"escaped","name":"second"}`
	tests := []struct {
		key  string
		want string // "" means nil
	}{
		{"name", `"echo"`}, // the first of duplicates
		{"_meta", `{"progressToken":1,"name":"inner"}`},
		{"arguments", `{"text":"hi"}`},
		{"progressToken", ""}, // not top level
		{"text", ""},
		{"key", "1"}, // found through its escaped spelling
		{"Name", ""}, // keys are case-sensitive
		{"k\"ey", `"escaped"`},
		{"", ""},
	}
	for _, tt := range tests {
		got := Member([]byte(obj), tt.key)
		if tt.want == "" {
			if got != nil {
				t.Errorf("Member(%q) = %s, want nil", tt.key, got)
			}
			continue
		}
		if string(got) != tt.want {
			t.Errorf("Member(%q) = %s, want %s", tt.key, got, tt.want)
		}
	}
	if got := Member([]byte(`not json`), "a"); got != nil {
		t.Errorf("Member on invalid input = %s", got)
	}
	if got := Member([]byte(`{"":0}`), ""); string(got) != "0" {
		t.Errorf(`Member("") = %s`, got)
	}
}

func TestMembersLargeValue(t *testing.T) {
	big := `"` + strings.Repeat(`x\"`, 100000) + `"`
	obj := `{"a":` + big + `,"b":{"c":` + big + `}}`
	got, err := collect(t, obj, 0)
	if err != nil || len(got) != 2 || got[0].value != big || got[1].key != "b" {
		t.Fatalf("Members on large object: %d members, %v", len(got), err)
	}
}

func TestMembersAllocs(t *testing.T) {
	obj := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{}}}`)
	n := 0
	fn := func(k string, v []byte) bool { n += len(k) + len(v); return true }
	if allocs := testing.AllocsPerRun(100, func() { _ = Members(obj, fn) }); allocs > 4 {
		t.Errorf("Members allocated %.0f times for 4 plain keys, want at most one per key", allocs)
	}
	var got []byte
	if allocs := testing.AllocsPerRun(100, func() { got = Member(obj, "params") }); allocs != 0 {
		t.Errorf("Member allocated %.0f times", allocs)
	}
	if string(got) != `{"_meta":{}}` {
		t.Errorf("Member(params) = %s", got)
	}
}
