package jsondec

import (
	"encoding/json"
	"testing"
)

var benchEcho = []byte(`{"text":"hello world"}`)

type benchArgs struct {
	Query   string            `json:"query"`
	Limit   int               `json:"limit"`
	Offset  int               `json:"offset"`
	Exact   bool              `json:"exact"`
	Tags    []string          `json:"tags"`
	Filters map[string]string `json:"filters"`
	Score   *float64          `json:"score"`
}

var benchArgsJSON = []byte(`{"query":"select * from \"t\"","limit":50,"offset":100,"exact":true,"tags":["a","bb","ccc"],"filters":{"lang":"go","kind":"func"},"score":0.75}`)

func BenchmarkDecodeEcho(b *testing.B) {
	dec := Compile[echo]()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEcho)))
	var v echo
	for b.Loop() {
		if err := dec(benchEcho, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalEcho(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEcho)))
	var v echo
	for b.Loop() {
		if err := json.Unmarshal(benchEcho, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeArgs(b *testing.B) {
	dec := Compile[benchArgs]()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchArgsJSON)))
	for b.Loop() {
		var v benchArgs
		if err := dec(benchArgsJSON, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalArgs(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchArgsJSON)))
	for b.Loop() {
		var v benchArgs
		if err := json.Unmarshal(benchArgsJSON, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAny(b *testing.B) {
	dec := Compile[map[string]any]()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchArgsJSON)))
	for b.Loop() {
		var v map[string]any
		if err := dec(benchArgsJSON, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalAny(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchArgsJSON)))
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(benchArgsJSON, &v); err != nil {
			b.Fatal(err)
		}
	}
}
