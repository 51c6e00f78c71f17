package spec

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Formats a string variable can declare, with their checks.
var varFormats = map[string]func(string) bool{
	"hostname":  func(s string) bool { return len(s) <= 253 && hostnameRE.MatchString(s) },
	"url":       func(s string) bool { u, err := url.ParseRequestURI(s); return err == nil && u.Scheme != "" },
	"email":     emailRE.MatchString,
	"ip":        func(s string) bool { return net.ParseIP(s) != nil },
	"cidr":      func(s string) bool { _, _, err := net.ParseCIDR(s); return err == nil },
	"uuid":      uuidRE.MatchString,
	"semver":    semverRE.MatchString,
	"datetime":  func(s string) bool { _, err := time.Parse(time.RFC3339, s); return err == nil },
	"dns-label": func(s string) bool { return len(s) <= 63 && dnsLabelRE.MatchString(s) },
}

// VarFormats lists the format names, sorted, for messages and the schema.
func VarFormats() []string {
	out := make([]string, 0, len(varFormats))
	for f := range varFormats {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

var (
	hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)
	emailRE    = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	semverRE   = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// checkDeclarations is the schema-level pass: every rule about the
// declarations themselves, before any value is looked at.
func checkDeclarations(d *Declarations) Problems {
	var probs Problems
	add := func(pos Pos, path, hint, format string, args ...any) {
		probs = append(probs, Problem{Pos: pos, Path: path, Message: path + ": " + fmt.Sprintf(format, args...), Hint: hint})
	}
	declared := func(name string) bool { return d.Lookup(name) != nil }
	for _, v := range d.Vars {
		p := "vars." + v.Name
		switch {
		case v.Type == "":
			add(v.Pos, p+".type", "write type: "+strings.Join(VarTypes, ", type: "), "is required")
		case !slices.Contains(VarTypes, v.Type):
			add(v.at("type"), p+".type", "one of "+strings.Join(VarTypes, ", "), "unknown type %q", v.Type)
		}
		if v.Required && v.Default != nil {
			add(v.at("default"), p, "drop required: true, or drop the default", "required: true cannot have a default (a required variable is always given)")
		}
		if v.Required && (len(v.RequiredWith) > 0 || len(v.RequiredWithout) > 0) {
			add(v.at("required"), p, "drop required: true, or the conditional requirement", "required: true cannot be combined with required_with or required_without")
		}
		if v.Secret && v.Default != nil {
			add(v.at("default"), p, "drop the default: a secret comes from its KHOOK_SECRET_ variable", "a secret cannot have a default (it would be written in the spec)")
		}
		if v.Secret && v.Immutable {
			add(v.at("immutable"), p, "drop immutable: true", "a secret cannot be immutable (its value would be kept in the state record)")
		}
		stringish := v.Type == VarString
		if v.Format != "" {
			if _, ok := varFormats[v.Format]; !ok {
				add(v.at("format"), p+".format", "one of "+strings.Join(VarFormats(), ", "), "unknown format %q", v.Format)
			} else if !stringish && v.Type != "" {
				add(v.at("format"), p+".format", "use type: string", "format applies only to type: string, not %s", v.Type)
			}
		}
		var re *regexp.Regexp
		if v.Pattern != "" {
			var err error
			if !stringish && v.Type != "" {
				add(v.at("pattern"), p+".pattern", "use type: string", "pattern applies only to type: string, not %s", v.Type)
			} else if re, err = regexp.Compile(v.Pattern); err != nil {
				add(v.at("pattern"), p+".pattern", "patterns are Go regular expressions (RE2)", "invalid pattern: %v", err)
			}
		}
		if _, ok := v.fieldPos["enum"]; ok {
			switch {
			case v.Type == VarList || v.Type == VarMap:
				add(v.at("enum"), p+".enum", "", "enum applies to scalar types, not %s", v.Type)
			case len(v.Enum) == 0:
				add(v.at("enum"), p+".enum", "list the allowed values", "must not be empty")
			default:
				for _, e := range v.Enum {
					if msg := typeError(v.Type, e); msg != "" {
						add(v.at("enum"), p+".enum", "", "value %q %s", e, msg)
					}
				}
			}
		}
		if v.Default != nil && slices.Contains(VarTypes, v.Type) {
			if msg := defaultError(v, re); msg != "" {
				add(v.at("default"), p+".default", "", "the default %s", msg)
			}
		}
		for _, ref := range []struct {
			field string
			names []string
		}{{"required_with", v.RequiredWith}, {"required_without", v.RequiredWithout}} {
			for _, n := range ref.names {
				switch {
				case n == v.Name:
					add(v.at(ref.field), p+"."+ref.field, "", "a variable cannot refer to itself")
				case !declared(n):
					add(v.at(ref.field), p+"."+ref.field, "declare it under vars:", "%s is not a declared variable", n)
				}
			}
		}
	}
	for i, r := range d.Rules {
		p := fmt.Sprintf("rules.%d", i)
		if r.Type != RuleOneOfRequired {
			add(r.Pos, p+".type", "the only rule type is oneof_required", "unknown rule type %q", r.Type)
		}
		if len(r.Vars) < 2 {
			add(r.Pos, p+".vars", "list two or more variables", "a %s rule needs at least two variables, got %d", RuleOneOfRequired, len(r.Vars))
		}
		for _, n := range r.Vars {
			if !declared(n) {
				add(r.Pos, p+".vars", "declare it under vars:", "%s is not a declared variable", n)
			}
		}
	}
	return probs
}

// defaultError checks a default against its declaration's type and string rules.
func defaultError(v *VarDecl, re *regexp.Regexp) string {
	n := v.defaultNode
	switch {
	case v.Type == VarList && (n == nil || n.Kind != yaml.SequenceNode):
		return "must be a list"
	case v.Type == VarMap && (n == nil || n.Kind != yaml.MappingNode):
		return "must be a map"
	case v.Type != VarList && v.Type != VarMap && n != nil && n.Kind != yaml.ScalarNode:
		return "must be a single value, not a list or map"
	}
	return valueError(v, *v.Default, re)
}

// typeError says why text is not a value of type t, or "".
func typeError(t, text string) string {
	switch t {
	case VarInt:
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return "is not an integer"
		}
	case VarBool:
		if text != "true" && text != "false" {
			return "is not a bool (write true or false)"
		}
	case VarDuration:
		if _, err := time.ParseDuration(text); err != nil {
			return "is not a duration such as 90s, 5m or 1h30m"
		}
	case VarList, VarMap:
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil || len(n.Content) != 1 {
			return "is not valid YAML or JSON"
		}
		if k := n.Content[0].Kind; t == VarList && k != yaml.SequenceNode {
			return `is not a list (write [a, b] or ["a","b"])`
		} else if t == VarMap && k != yaml.MappingNode {
			return `is not a map (write {a: 1} or {"a":1})`
		}
	}
	return ""
}

// valueError checks one value: type, enum, then (non-empty strings) format
// and pattern.
func valueError(v *VarDecl, text string, re *regexp.Regexp) string {
	if msg := typeError(v.Type, text); msg != "" {
		return msg
	}
	if len(v.Enum) > 0 && !slices.Contains(v.Enum, text) {
		return "is not one of " + strings.Join(v.Enum, ", ")
	}
	if text == "" {
		return ""
	}
	if check := varFormats[v.Format]; check != nil && !check(text) {
		return "is not a valid " + v.Format
	}
	if re != nil && !re.MatchString(text) {
		return "does not match the pattern " + v.Pattern
	}
	return ""
}

// zeroValue is what an optional variable without a default becomes.
func zeroValue(t string) string {
	switch t {
	case VarList:
		return "[]"
	case VarMap:
		return "{}"
	}
	return ""
}
