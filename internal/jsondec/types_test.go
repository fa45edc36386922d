package jsondec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Types shared by the table tests and the fuzz test. Member names are all
// lower case, so that inputs whose keys have no upper-case letters decode
// the same here and in encoding/json.

type echo struct {
	Text string `json:"text"`
}

type inner struct {
	A int      `json:"a"`
	B string   `json:"b"`
	C []string `json:"c"`
	D *inner   `json:"d"`
}

// upper implements encoding.TextUnmarshaler: it upper-cases the text and
// refuses text containing "!".
type upper string

func (u *upper) UnmarshalText(b []byte) error {
	if bytes.Contains(b, []byte("!")) {
		return errors.New("upper: no exclamation marks")
	}
	*u = upper(strings.ToUpper(string(b)))
	return nil
}

// rawRec implements json.Unmarshaler: it keeps the raw value and refuses
// values longer than 40 bytes.
type rawRec struct {
	Raw string
}

func (r *rawRec) UnmarshalJSON(b []byte) error {
	if len(b) > 40 {
		return errors.New("rawRec: too long")
	}
	r.Raw = string(b)
	return nil
}

// typeErrRec returns an UnmarshalTypeError for arrays, to check that the
// decoder adds the field path to it as encoding/json does.
type typeErrRec struct{ N int }

func (r *typeErrRec) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		return &json.UnmarshalTypeError{Value: "array", Type: reflect.TypeFor[typeErrRec](), Field: "inside"}
	}
	r.N = len(b)
	return nil
}

// textKey is a map key decoded from text.
type textKey struct{ S string }

func (k *textKey) UnmarshalText(b []byte) error {
	if len(b) > 8 {
		return fmt.Errorf("textKey: %q too long", b)
	}
	k.S = "<" + string(b) + ">"
	return nil
}

// textSlice is a slice type with UnmarshalText: null sets it to nil.
type textSlice []int

func (s *textSlice) UnmarshalText(b []byte) error {
	*s = textSlice{len(b)}
	return nil
}

type myString string
type myInt int16
type myBytes []byte

type all struct {
	S    string            `json:"s"`
	MS   myString          `json:"ms"`
	I    int               `json:"i"`
	I8   int8              `json:"i8"`
	I16  myInt             `json:"i16"`
	I32  int32             `json:"i32"`
	U    uint              `json:"u"`
	U8   uint8             `json:"u8"`
	U16  uint16            `json:"u16"`
	U64  uint64            `json:"u64"`
	F    float64           `json:"f"`
	F32  float32           `json:"f32"`
	B    bool              `json:"b"`
	P    *int              `json:"p"`
	PP   **string          `json:"pp"`
	A    any               `json:"a"`
	PA   *any              `json:"pa"`
	Sl   []int             `json:"sl"`
	SS   [][]string        `json:"ss"`
	Ar   [2]string         `json:"ar"`
	AB   [3]byte           `json:"ab"`
	M    map[string]int    `json:"m"`
	MA   map[string]any    `json:"ma"`
	MS2  map[string]string `json:"ms2"`
	MI   map[int8]string   `json:"mi"`
	MU   map[uint16]bool   `json:"mu"`
	MN   map[myString]int  `json:"mn"`
	MT   map[textKey]int   `json:"mt"`
	MF   map[float64]int   `json:"mf"`
	Bs   []byte            `json:"bs"`
	MB   myBytes           `json:"mb"`
	R    json.RawMessage   `json:"r"`
	N    json.Number       `json:"n"`
	T    upper             `json:"t"`
	PT   *upper            `json:"pt"`
	TS   textSlice         `json:"ts"`
	UJ   rawRec            `json:"uj"`
	PUJ  *rawRec           `json:"puj"`
	TE   typeErrRec        `json:"te"`
	St   fmt.Stringer      `json:"st"`
	Er   error             `json:"er"`
	In   inner             `json:"in"`
	PIn  *inner            `json:"pin"`
	Ins  []inner           `json:"ins"`
	MIn  map[string]*inner `json:"min"`
	Next *all              `json:"next"`
	Skip int               `json:"-"`
	Dash int               `json:"-,"`
	Omit string            `json:"omit,omitempty"`

	hidden int
}

// Types with embedded structs.

type Base struct {
	ID   int    `json:"id"`
	Note string `json:"note"`
}

// BaseAlt, Common, ViaA and ViaB make name conflicts in structs built by
// TestEmbeddingRules (vet refuses such tags in source).
type BaseAlt struct {
	ID    string `json:"id"`
	Other int    `json:"other"`
}

type Common struct {
	K int `json:"k"`
	L int `json:"l"`
}

type ViaA struct {
	Common
	A1 int `json:"a1"`
}

type ViaB struct {
	Common
	B1 int `json:"b1"`
}

type PBase struct {
	Q  string `json:"q"`
	In inner  `json:"qin"`
}

type unexpPtr struct {
	UX int `json:"ux"`
}

type Tagged struct {
	T int `json:"t"`
}

type embeds struct {
	Base
	ViaA
	*PBase    // allocated when one of its fields is met
	*unexpPtr // cannot be allocated: an error when nil
	Tagged    `json:"tg"`
	Extra     string `json:"extra"`
	Other     int    `json:"other"`
}

// rawInt has an int kind and UnmarshalJSON.
type rawInt int

func (r *rawInt) UnmarshalJSON(b []byte) error {
	*r = rawInt(len(b))
	return nil
}

type quotedAll struct {
	I  int         `json:"i,string"`
	I8 int8        `json:"i8,string"`
	U  uint16      `json:"u,string"`
	F  float32     `json:"f,string"`
	B  bool        `json:"b,string"`
	S  string      `json:"s,string"`
	P  *int        `json:"p,string"`
	PS *string     `json:"ps,string"`
	N  json.Number `json:"n,string"`
	T  upper       `json:"t,string"`
	PT *upper      `json:"pt,string"`
	R  rawInt      `json:"r,string"`
	MS myString    `json:"ms,string"`
	Sl []int       `json:"sl,string"` // the option does not apply
}

type namedPtr *inner

// upperPtr is a named pointer to a type with UnmarshalText, which
// encoding/json does not call through it.
type upperPtr *upper

type odd struct {
	NP namedPtr       `json:"np"`
	UP upperPtr       `json:"up"`
	C  chan int       `json:"c"`
	Fn func()         `json:"fn"`
	X  complex64      `json:"x"`
	U  unsafe.Pointer `json:"u"`
	A  any            `json:"a"`
}
