package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestContentRoundTrip(t *testing.T) {
	p := 0.5
	blocks := []Content{
		&TextContent{Text: "hi", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &p}},
		&ImageContent{Data: "AAAA", MIMEType: "image/png"},
		&AudioContent{Data: "BBBB", MIMEType: "audio/wav"},
		&ResourceLink{Resource: Resource{URI: "file:///a", Name: "a"}},
		&EmbeddedResource{Resource: &ResourceContents{URI: "file:///b", Text: "b"}},
		&EmbeddedResource{Resource: &ResourceContents{URI: "file:///c", Blob: []byte{1, 2}}},
	}
	want := `{"resultType":"complete","content":[` +
		`{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}},` +
		`{"type":"image","data":"AAAA","mimeType":"image/png"},` +
		`{"type":"audio","data":"BBBB","mimeType":"audio/wav"},` +
		`{"type":"resource_link","uri":"file:///a","name":"a"},` +
		`{"type":"resource","resource":{"uri":"file:///b","text":"b"}},` +
		`{"type":"resource","resource":{"uri":"file:///c","blob":"AQI="}}]}`
	res := &CallToolResult{ResultHeader: ResultHeader{ResultType: ResultComplete}, Content: blocks}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Fatalf("marshal =\n%s\nwant\n%s", b, want)
	}
	var back CallToolResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Content, blocks) {
		t.Fatalf("round trip differs:\n%#v\n%#v", back.Content, blocks)
	}
	if _, err := UnmarshalContent([]byte(`{"type":"video"}`)); err == nil {
		t.Fatal("unknown content type accepted")
	}
}

func TestEmptyToolResultEncodesContentList(t *testing.T) {
	b, _ := json.Marshal(&CallToolResult{})
	if string(b) != `{"content":[]}` {
		t.Fatalf("empty result = %s", b)
	}
}

func TestRequestMetaExtra(t *testing.T) {
	in := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"progressToken":"p","traceparent":"00-a-b-01","com.example/x":{"y":1}}`
	var m RequestMeta
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.ProtocolVersion != "2026-07-28" || m.ProgressToken.String() != "p" || m.Traceparent != "00-a-b-01" {
		t.Fatalf("decoded %+v", m)
	}
	if m.ClientCapabilities.Elicitation == nil || m.ClientCapabilities.Elicitation.Form == nil {
		t.Fatal("elicitation.form lost")
	}
	if string(m.Extra["com.example/x"]) != `{"y":1}` || len(m.Extra) != 1 {
		t.Fatalf("extra = %v", m.Extra)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"traceparent":"00-a-b-01","com.example/x":{"y":1}}`
	if string(out) != want {
		t.Fatalf("marshal =\n%s\nwant\n%s", out, want)
	}
}

func TestCapabilitiesKeepEmptyObjects(t *testing.T) {
	b, _ := json.Marshal(ServerCapabilities{Logging: Object{}, Completions: Object{}})
	if string(b) != `{"logging":{},"completions":{}}` {
		t.Fatalf("capabilities = %s", b)
	}
	b, _ = json.Marshal(ClientCapabilities{Sampling: &SamplingCapability{Tools: Object{}}})
	if string(b) != `{"sampling":{"tools":{}}}` {
		t.Fatalf("client capabilities = %s", b)
	}
}

func TestSamplingMessageForms(t *testing.T) {
	var one, many CreateMessageResult
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":{"type":"text","text":"a"},"model":"m","stopReason":"endTurn"}`), &one); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`), &many); err != nil {
		t.Fatal(err)
	}
	if len(one.Content) != 1 || one.Model != "m" || one.StopReason != "endTurn" || len(many.Content) != 2 {
		t.Fatalf("decoded %+v / %+v", one, many)
	}
	b, _ := json.Marshal(&one)
	if string(b) != `{"role":"assistant","content":{"type":"text","text":"a"},"model":"m","stopReason":"endTurn"}` {
		t.Fatalf("marshal = %s", b)
	}
}

func TestInputResponsesRejectsNonObjects(t *testing.T) {
	var p InputParams
	for _, bad := range []string{`{"inputResponses":null}`, `{"inputResponses":[1]}`, `{"inputResponses":"x"}`} {
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := json.Unmarshal([]byte(`{"inputResponses":{"a":{"action":"accept"}}}`), &p); err != nil || len(p.InputResponses) != 1 {
		t.Fatalf("valid inputResponses: %v %v", err, p)
	}
}

func TestErrorsCarrySpecData(t *testing.T) {
	if e := UnsupportedVersion("x", []string{"2026-07-28"}); e.Code != -32022 || string(e.Data) != `{"supported":["2026-07-28"],"requested":"x"}` {
		t.Fatalf("%d %s", e.Code, e.Data)
	}
	if e := MissingCapability(ClientCapabilities{Sampling: &SamplingCapability{}}); e.Code != -32021 || string(e.Data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Fatalf("%d %s", e.Code, e.Data)
	}
	if e := ResourceNotFound("a://b").Wire(); e.Code != -32602 || string(e.Data) != `{"uri":"a://b"}` {
		t.Fatalf("%d %s", e.Code, e.Data)
	}
}

// TestRequestMetaNotShared: requests that carry the same clientInfo and
// clientCapabilities bytes get values of their own; a handler changing one
// changes nothing another request sees.
func TestRequestMetaNotShared(t *testing.T) {
	raw := []byte(`{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","icons":[{"src":"a.png","sizes":["16x16"]}]},` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{"tools":{}},` +
		`"elicitation":{"form":{"x":1}},"experimental":{"e":{"k":"v"}},"extensions":{"io.x/y":{}}}}`)
	decode := func() *RequestMeta {
		var m RequestMeta
		if err := m.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		return &m
	}
	change := func(a *RequestMeta) {
		a.ClientInfo.Name = "changed"
		a.ClientInfo.Icons[0].Src = "evil.png"
		a.ClientInfo.Icons[0].Sizes[0] = "1x1"
		a.ClientCapabilities.Roots.ListChanged = false
		a.ClientCapabilities.Sampling.Tools["x"] = json.RawMessage(`1`)
		a.ClientCapabilities.Elicitation.Form["x"][0] = '9'
		a.ClientCapabilities.Experimental["e"]["k"] = json.RawMessage(`"w"`)
		delete(a.ClientCapabilities.Extensions, "io.x/y")
	}
	change(decode())
	// The first decoding fills the caches; the later ones are copies from
	// them, which the handler may change too.
	for i := range 3 {
		b := decode()
		got, _ := json.Marshal(b)
		want := `{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","icons":[{"src":"a.png","sizes":["16x16"]}]},` +
			`"io.modelcontextprotocol/clientCapabilities":{"experimental":{"e":{"k":"v"}},"roots":{"listChanged":true},"sampling":{"tools":{}},` +
			`"elicitation":{"form":{"x":1}},"extensions":{"io.x/y":{}}}}`
		if string(got) != want {
			t.Fatalf("decode %d after a change to another request's values:\n got %s\nwant %s", i, got, want)
		}
		change(b)
	}
}

// TestRequestMetaCache: a _meta with nothing of the request's own is
// decoded once and copied to later requests with the same bytes; one with
// a progress token, trace context or other members is decoded every time.
func TestRequestMetaCache(t *testing.T) {
	shared := []byte(`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`)
	var a, b RequestMeta
	if err := a.UnmarshalJSON(shared); err != nil {
		t.Fatal(err)
	}
	if metaCache.get(shared) == nil {
		t.Fatal("not cached")
	}
	b.ProgressToken = &ProgressToken{}
	b.Extra = map[string]json.RawMessage{"x": json.RawMessage(`1`)}
	if err := b.UnmarshalJSON(shared); err != nil {
		t.Fatal(err)
	}
	if b.ProtocolVersion != "2025-11-25" || b.LogLevel != "debug" || b.ClientCapabilities == nil || b.ClientCapabilities.Roots == nil ||
		b.ClientInfo != nil || b.ProgressToken != nil || b.Extra != nil || b.ClientCapabilities == a.ClientCapabilities {
		t.Fatalf("from the cache: %+v", b)
	}
	for _, own := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","progressToken":1}`,
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","traceparent":"00-a-b-01"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","com.example/x":1}`,
	} {
		var m RequestMeta
		if err := m.UnmarshalJSON([]byte(own)); err != nil {
			t.Fatal(err)
		}
		if metaCache.get([]byte(own)) != nil {
			t.Errorf("%s cached", own)
		}
	}
}

// TestMetaVersion: the version of a _meta object is the same read afresh
// and answered from the cache that decoding it fills.
func TestMetaVersion(t *testing.T) {
	for _, raw := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}`,
		`{"io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":7}`,
		`{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`[]`, `null`,
	} {
		want := ""
		var m RequestMeta
		if strings.HasPrefix(raw, "{") && m.UnmarshalJSON([]byte(raw)) == nil {
			want = m.ProtocolVersion
		}
		// The first UnmarshalJSON may have cached raw; read it twice more.
		for range 2 {
			if got := MetaVersion([]byte(raw)); got != want {
				t.Errorf("MetaVersion(%s) = %q, want %q", raw, got, want)
			}
		}
	}
}

// TestDecodeCacheLast: the entry found last answers only its own bytes;
// others alternating with it get theirs.
func TestDecodeCacheLast(t *testing.T) {
	var c decodeCache[string]
	a, b := "a", "b"
	c.put([]byte(`{"x":1}`), &a)
	c.put([]byte(`{"x":2}`), &b)
	for range 3 {
		if got := c.get([]byte(`{"x":1}`)); got != &a {
			t.Fatalf(`{"x":1}: %v`, got)
		}
		if got := c.get([]byte(`{"x":2}`)); got != &b {
			t.Fatalf(`{"x":2}: %v`, got)
		}
		if got := c.get([]byte(`{"x":3}`)); got != nil {
			t.Fatalf(`{"x":3}: %v`, *got)
		}
		if got := c.get([]byte(`{"x":2} `)); got != nil {
			t.Fatalf(`{"x":2} and a space: %v`, *got)
		}
	}
}

// TestRequestMetaCopyToSharesNothing: changing every part of a copy leaves
// the original as it was.
func TestRequestMetaCopyToSharesNothing(t *testing.T) {
	src := RequestMeta{
		ClientInfo: &Implementation{Name: "c", Version: "1", Icons: []Icon{{Src: "i.png", Sizes: []string{"16x16"}}}},
		ClientCapabilities: &ClientCapabilities{
			Roots:       &RootsCapability{ListChanged: true},
			Elicitation: &ElicitationCapability{Form: Object{}},
			Extensions:  map[string]Object{"x": {}},
		},
	}
	before, err := json.Marshal(&src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(before), "16x16") || !strings.Contains(string(before), `"x"`) {
		t.Fatalf("the original's JSON lacks what the test changes: %s", before)
	}
	var dst RequestMeta
	src.CopyTo(&dst)
	dst.ClientInfo.Name = "changed"
	dst.ClientInfo.Icons[0].Sizes[0] = "changed"
	dst.ClientCapabilities.Roots.ListChanged = false
	dst.ClientCapabilities.Elicitation.Form = nil
	dst.ClientCapabilities.Extensions["y"] = Object{}
	after, err := json.Marshal(&src)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("the original changed with its copy:\n%s\n%s", before, after)
	}
	var none, none2 RequestMeta
	none.CopyTo(&none2)
	if none2.ClientInfo != nil || none2.ClientCapabilities != nil {
		t.Error("a copy of nothing declared something")
	}
}
