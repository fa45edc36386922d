package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e3,-0,"x\u00e9",true,false,null],"b":{"c":{}}}`, `"\ud800"`, "\"\xff\"", ` 12 `, `{"a":1,"a":2}`, `[`, `{"a" 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseValue(data)
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var want any
		werr := d.Decode(&want)
		if werr == nil && len(bytes.TrimLeft(data[d.InputOffset():], " \t\r\n")) > 0 {
			werr = errInvalidJSON
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseValue(%q) error %v, encoding/json %v", data, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("parseValue(%q) = %#v, encoding/json %#v", data, got, want)
		}
	})
}
