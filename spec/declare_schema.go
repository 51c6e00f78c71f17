package spec

import (
	"encoding/json"
	"strconv"
)

// The vars: and rules: blocks in the spec's own JSON Schema. The blocks are
// read before substitution, so their values are never ${} templates.
func declVarsSchema() obj {
	scalar := obj{"type": []string{"string", "number", "boolean"}}
	names := obj{"type": "array", "items": obj{"type": "string", "pattern": varNamePattern}}
	decl := object(obj{
		"type":             obj{"enum": VarTypes, "description": "Values still reach ${} as text; list and map values as YAML/JSON text"},
		"required":         obj{"type": "boolean", "description": "The user must give a value (no default)"},
		"default":          obj{"description": "Used when no value is given; ${NAME} then needs no :-"},
		"description":      obj{"type": "string", "description": "Shown by khook vars and in generated docs"},
		"format":           obj{"enum": VarFormats(), "description": "A format check for type: string (empty values pass)"},
		"pattern":          obj{"type": "string", "description": "A Go (RE2) regular expression a non-empty string value must match"},
		"enum":             obj{"type": "array", "minItems": 1, "items": scalar, "description": "The allowed values"},
		"secret":           obj{"type": "boolean", "description": "Comes only from the secret environment prefix (KHOOK_SECRET_), never --set; redacted everywhere"},
		"required_with":    desc(names, "Required when any of these variables is given"),
		"required_without": desc(names, "Required when none of these variables is given"),
		"immutable":        obj{"type": "boolean", "description": "Recorded in the state record; a later run with another value is refused"},
	}, "type")
	decl["allOf"] = []any{
		obj{"not": obj{"required": []string{"required", "default"}, "properties": obj{"required": obj{"const": true}}}},
		obj{"if": obj{"anyOf": []any{obj{"required": []string{"format"}}, obj{"required": []string{"pattern"}}}}, "then": obj{"properties": obj{"type": obj{"const": VarString}}}},
		obj{"not": obj{"required": []string{"secret", "default"}, "properties": obj{"secret": obj{"const": true}}}},
	}
	return obj{
		"type":                 "object",
		"description":          "Declared inputs: each variable's type, whether it is required, its default and checks",
		"propertyNames":        obj{"pattern": varNamePattern},
		"additionalProperties": decl,
	}
}

func declRulesSchema() obj {
	return obj{
		"type":        "array",
		"description": "Rules across declared variables",
		"items": object(obj{
			"type":    obj{"const": RuleOneOfRequired, "description": "At least one of vars must be given"},
			"vars":    obj{"type": "array", "minItems": 2, "items": obj{"type": "string", "pattern": varNamePattern}},
			"message": obj{"type": "string", "description": "Shown when the rule fails"},
		}, "type", "vars"),
	}
}

const varNamePattern = `^[A-Za-z_][A-Za-z0-9_]*$`

// JSONSchema describes the declared inputs as one JSON Schema object (KUDO's
// reason: UIs and docs generate forms from it). Types map to JSON types,
// formats to JSON Schema formats where one exists, required_with to
// dependentRequired, required_without and oneof_required to anyOf.
func (d *Declarations) JSONSchema() ([]byte, error) {
	props := obj{}
	var required []string
	var all []any
	dependent := obj{}
	for _, v := range d.Vars {
		p := varJSONType(v)
		if v.Description != "" {
			p["description"] = v.Description
		}
		if v.defaultNode != nil {
			var def any
			if err := v.defaultNode.Decode(&def); err == nil {
				p["default"] = typedScalar(v.Type, def)
			}
		}
		if len(v.Enum) > 0 {
			vals := make([]any, len(v.Enum))
			for i, e := range v.Enum {
				vals[i] = typedScalar(v.Type, e)
			}
			p["enum"] = vals
		}
		if v.Pattern != "" {
			p["pattern"] = v.Pattern
		}
		if v.Secret {
			p["writeOnly"] = true
			p["x-khook-secret"] = true
		}
		if v.Immutable {
			p["x-khook-immutable"] = true
		}
		props[v.Name] = p
		if v.Required {
			required = append(required, v.Name)
		}
		for _, w := range v.RequiredWith {
			list, _ := dependent[w].([]string)
			dependent[w] = append(list, v.Name)
		}
		if len(v.RequiredWithout) > 0 {
			all = append(all, anyRequired(append([]string{v.Name}, v.RequiredWithout...)))
		}
	}
	for _, r := range d.Rules {
		s := anyRequired(r.Vars)
		if r.Message != "" {
			s["description"] = r.Message
		}
		all = append(all, s)
	}
	doc := obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"additionalProperties": true,
	}
	if len(required) > 0 {
		doc["required"] = required
	}
	if len(dependent) > 0 {
		doc["dependentRequired"] = dependent
	}
	if len(all) > 0 {
		doc["allOf"] = all
	}
	return json.MarshalIndent(doc, "", "  ")
}

func anyRequired(names []string) obj {
	alts := make([]any, len(names))
	for i, n := range names {
		alts[i] = obj{"required": []string{n}}
	}
	return obj{"anyOf": alts}
}

var jsonFormats = map[string]obj{
	"hostname":  {"format": "hostname"},
	"url":       {"format": "uri"},
	"email":     {"format": "email"},
	"ip":        {"anyOf": []any{obj{"format": "ipv4"}, obj{"format": "ipv6"}}},
	"cidr":      {"pattern": `^[0-9a-fA-F.:]+/[0-9]{1,3}$`},
	"uuid":      {"format": "uuid"},
	"semver":    {"pattern": semverRE.String()},
	"datetime":  {"format": "date-time"},
	"dns-label": {"pattern": dnsLabelRE.String(), "maxLength": 63},
}

func varJSONType(v *VarDecl) obj {
	switch v.Type {
	case VarInt:
		return obj{"type": "integer"}
	case VarBool:
		return obj{"type": "boolean"}
	case VarDuration:
		return obj{"type": "string", "pattern": durationPattern}
	case VarList:
		return obj{"type": "array"}
	case VarMap:
		return obj{"type": "object"}
	}
	p := obj{"type": "string"}
	for k, val := range jsonFormats[v.Format] {
		p[k] = val
	}
	return p
}

// typedScalar turns an enum or default text into the JSON value its type implies.
func typedScalar(t string, v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch t {
	case VarInt:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case VarBool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}
