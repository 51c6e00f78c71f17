package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// resolveDeclared is the value pass, run once the declarations are sound:
// each declared variable's value is checked (type, enum, format, pattern,
// where a secret came from), conditional requirements and rules are judged
// on what the user provided — not on defaults — and then defaults (or the
// type's zero value) are filled in, so ${NAME} needs no :-. Every problem is
// returned at once; a problem is placed at the declaration.
func resolveDeclared(d *Declarations, vs *varSet, opts LoadOptions) Problems {
	var probs Problems
	add := func(v *VarDecl, hint, format string, args ...any) {
		probs = append(probs, Problem{Pos: v.Pos, Path: "vars." + v.Name, Message: fmt.Sprintf("variable %s", v.Name) + fmt.Sprintf(format, args...), Hint: hint})
	}
	provided := func(name string) bool { _, ok := vs.vals[name]; return ok }
	for _, v := range d.Vars {
		text, ok := vs.vals[v.Name]
		v.Provided = ok
		if !ok {
			continue
		}
		v.Source = sourceOf(v.Name, vs, opts)
		if v.Secret {
			opts.Redactor.Add(text) // whatever its source, never print it
			if !vs.secret[v.Name] {
				add(v, fmt.Sprintf("set %s%s in the environment instead", opts.SecretPrefix, v.Name),
					" is a secret but was given by %s; secrets come only from %s%s", v.Source, opts.SecretPrefix, v.Name)
				continue
			}
		}
		var re *regexp.Regexp
		if v.Pattern != "" {
			re = regexp.MustCompile(v.Pattern) // compiled once already by checkDeclarations
		}
		if msg := valueError(v, text, re); msg != "" {
			shown := fmt.Sprintf(" %q", text)
			if v.Secret {
				shown = ""
			}
			add(v, describeDecl(v), ": the value%s from %s %s", shown, v.Source, msg)
		}
	}
	for _, v := range d.Vars {
		if v.Provided {
			continue
		}
		switch {
		case v.Required:
			add(v, howToSet(v, opts), " is required%s", aboutDecl(v))
		case len(v.RequiredWith) > 0:
			var given []string
			for _, n := range v.RequiredWith {
				if provided(n) {
					given = append(given, n)
				}
			}
			if len(given) > 0 {
				add(v, howToSet(v, opts), " is required because %s %s given", strings.Join(given, " and "), isAre(len(given)))
			}
		}
		if len(v.RequiredWithout) > 0 && !slices.ContainsFunc(v.RequiredWithout, provided) {
			add(v, howToSet(v, opts), " is required because none of %s is given", strings.Join(v.RequiredWithout, ", "))
		}
	}
	for _, r := range d.Rules {
		if slices.ContainsFunc(r.Vars, provided) {
			continue
		}
		msg := r.Message
		if msg == "" {
			msg = "one of " + strings.Join(r.Vars, ", ") + " must be given"
		}
		hint := "set one of them with --set NAME=value, --var-file or " + opts.VarPrefix + "NAME"
		if !slices.ContainsFunc(r.Vars, func(n string) bool { v := d.Lookup(n); return v != nil && !v.Secret }) {
			hint = "set one of them in the environment as " + opts.SecretPrefix + "NAME"
		}
		probs = append(probs, Problem{Pos: r.Pos, Path: "rules", Message: msg, Hint: hint})
	}
	if len(probs) > 0 {
		return probs
	}
	for _, v := range d.Vars {
		switch {
		case v.Provided:
			v.Value = vs.vals[v.Name]
			vs.secret[v.Name] = v.Secret
		case v.Default != nil:
			v.Value, v.Source = *v.Default, "default"
		default:
			v.Value, v.Source = zeroValue(v.Type), "unset"
		}
		vs.vals[v.Name] = v.Value
	}
	return nil
}

// sourceOf names where a provided variable's value came from, precedence
// as gatherVars applies it.
func sourceOf(name string, vs *varSet, opts LoadOptions) string {
	for _, kv := range opts.Set {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			return "--set"
		}
	}
	if vs.secret[name] {
		return "environment " + opts.SecretPrefix + name
	}
	for _, kv := range opts.Environ {
		if k, val, _ := strings.Cut(kv, "="); k == opts.VarPrefix+name && val == vs.vals[name] {
			return "environment " + k
		}
	}
	return "--var-file"
}

func describeDecl(v *VarDecl) string {
	var parts []string
	if v.Type != VarString {
		parts = append(parts, "type "+v.Type)
	}
	if v.Format != "" {
		parts = append(parts, "format "+v.Format)
	}
	if v.Description != "" {
		parts = append(parts, v.Description)
	}
	return strings.Join(parts, "; ")
}

func aboutDecl(v *VarDecl) string {
	if v.Description == "" {
		return ""
	}
	return " (" + v.Description + ")"
}

func howToSet(v *VarDecl, opts LoadOptions) string {
	if v.Secret {
		return "set " + opts.SecretPrefix + v.Name + " in the environment"
	}
	return fmt.Sprintf("pass --set %s=..., put it in a --var-file, or set %s%s", v.Name, opts.VarPrefix, v.Name)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// immutableNeedsState: immutable values are kept in the state record, so a
// spec that keeps none cannot enforce them.
func immutableNeedsState(s *Spec) Problems {
	if s.Declared == nil || s.State != nil && s.State.Enabled {
		return nil
	}
	var probs Problems
	for _, v := range s.Declared.Vars {
		if v.Immutable {
			probs = append(probs, Problem{Pos: v.at("immutable"), Path: "vars." + v.Name + ".immutable",
				Message: "vars." + v.Name + ".immutable: an immutable input is kept in the state record, but this spec keeps none",
				Hint:    "add a state: block (state: {namespace: kube-system}) or drop immutable: true"})
		}
	}
	return probs
}
