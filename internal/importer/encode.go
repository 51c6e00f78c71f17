package importer

import (
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// encodeStep encodes a step as a YAML node. yaml.v3 writes a multi-line
// string that begins with white space or holds a tab (sh -c "⏎psql …") as
// a block scalar it cannot read back inside a list ("did not find
// expected '-' indicator"), which lost the whole import (46zp's D1): such
// a string is encoded as a stand-in, then put back double-quoted.
func encodeStep(out *OutStep) (*yaml.Node, error) {
	s := &standIns{}
	s.walk(reflect.ValueOf(out))
	defer s.restore()
	n := &yaml.Node{}
	if err := n.Encode(out); err != nil {
		return nil, err
	}
	s.putBack(n)
	return n, nil
}

// awkward: a string yaml.v3 cannot write as a block scalar in a list.
func awkward(v string) bool {
	return strings.Contains(v, "\n") && (strings.TrimLeft(v, " \t\n") != v || strings.Contains(v, "\t"))
}

type standIns struct {
	texts []string
	undo  []func()
}

const standInMark = "khook-stand-in-"

func (s *standIns) mark(v string) string {
	s.texts = append(s.texts, v)
	return standInMark + strconv.Itoa(len(s.texts)-1)
}

func (s *standIns) restore() {
	for _, u := range s.undo {
		u()
	}
}

// walk swaps every awkward string under v for a stand-in, in place.
func (s *standIns) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			s.walk(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		if e := v.Elem(); e.Kind() == reflect.String && awkward(e.String()) && v.CanSet() {
			v.Set(reflect.ValueOf(s.mark(e.String())))
			s.undo = append(s.undo, func() { v.Set(e) })
			return
		}
		s.walk(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				s.walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			s.walk(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			inner := e
			if inner.Kind() == reflect.Interface && !inner.IsNil() {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.String && awkward(inner.String()) {
				v.SetMapIndex(k, reflect.ValueOf(s.mark(inner.String())).Convert(v.Type().Elem()))
				s.undo = append(s.undo, func() { v.SetMapIndex(k, e) })
				continue
			}
			s.walk(inner)
		}
	case reflect.String:
		if orig := v.String(); v.CanSet() && awkward(orig) {
			v.SetString(s.mark(orig))
			s.undo = append(s.undo, func() { v.SetString(orig) })
		}
	}
}

// putBack writes each stand-in's text double-quoted.
func (s *standIns) putBack(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, standInMark) {
		if i, err := strconv.Atoi(n.Value[len(standInMark):]); err == nil && i < len(s.texts) {
			n.Value, n.Tag, n.Style = s.texts[i], "!!str", yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		s.putBack(c)
	}
}
