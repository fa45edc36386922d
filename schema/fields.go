package schema

import (
	"reflect"
	"slices"
	"strings"
)

// structField is a JSON-visible field of a struct, after flattening embedded
// structs the way encoding/json does.
type structField struct {
	name      string // JSON property name
	tagged    bool   // name came from a json tag
	index     []int  // reflect index path from the outer struct
	sf        reflect.StructField
	omitEmpty bool // omitempty or omitzero
	asString  bool // ",string" option
	viaPtr    bool // promoted through an embedded pointer
}

// jsonTag splits a json struct tag into its name and options.
func jsonTag(tag string) (name string, opts []string) {
	name, rest, _ := strings.Cut(tag, ",")
	if rest != "" {
		opts = strings.Split(rest, ",")
	}
	return name, opts
}

// validTagName reports whether encoding/json would accept name as a key.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r):
		case r == '\\' || r == '"' || r == '\'' || r == '`' || r == ',':
			return false
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r > 0x7f:
		default:
			return false
		}
	}
	return true
}

// structFields lists the JSON properties of struct type t in encoding order.
// Embedded structs without a json name are expanded breadth-first; when
// several fields share a name, the shallowest wins, a tagged one wins over
// untagged at equal depth, and otherwise all of them are dropped.
func structFields(t reflect.Type) []structField {
	type level struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	var all []structField
	seen := map[reflect.Type]bool{}
	current := []level{{typ: t}}
	for len(current) > 0 {
		var next []level
		// Embedded types reached more than once at the same depth conflict
		// with each other; their fields are all dropped.
		dup := map[reflect.Type]int{}
		for _, lv := range current {
			dup[lv.typ]++
		}
		for _, lv := range current {
			if seen[lv.typ] {
				continue
			}
			seen[lv.typ] = true
			for i := 0; i < lv.typ.NumField(); i++ {
				sf := lv.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts := jsonTag(tag)
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clone(lv.index), i)
				if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, level{typ: ft, index: index,
						viaPtr: lv.viaPtr || sf.Type.Kind() == reflect.Pointer})
					continue
				}
				f := structField{name: name, tagged: name != "", index: index, sf: sf, viaPtr: lv.viaPtr}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range opts {
					switch o {
					case "omitempty", "omitzero":
						f.omitEmpty = true
					case "string":
						f.asString = true
					}
				}
				all = append(all, f)
				if dup[lv.typ] > 1 {
					all = append(all, f) // guarantees the conflict is detected
				}
			}
		}
		current = next
	}

	byName := map[string][]int{}
	for i, f := range all {
		byName[f.name] = append(byName[f.name], i)
	}
	var out []structField
	for _, idxs := range byName {
		if f, ok := dominant(all, idxs); ok {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b structField) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant picks the field that wins among fields sharing one JSON name.
func dominant(all []structField, idxs []int) (structField, bool) {
	depth := -1
	var best []int
	for _, i := range idxs {
		d := len(all[i].index)
		switch {
		case depth < 0 || d < depth:
			depth, best = d, []int{i}
		case d == depth:
			best = append(best, i)
		}
	}
	if len(best) == 1 {
		return all[best[0]], true
	}
	var tagged []int
	for _, i := range best {
		if all[i].tagged {
			tagged = append(tagged, i)
		}
	}
	if len(tagged) == 1 {
		return all[tagged[0]], true
	}
	return structField{}, false
}
