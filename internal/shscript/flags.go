package shscript

import (
	"slices"
	"strings"
)

// flag is one flag of a command line, in order.
type flag struct {
	name string // without dashes: "n", "namespace", "set"
	val  string
	has  bool // a value was given (--x=v or a valued flag)
}

// flags is a command line split into positionals and flags.
type flags struct {
	pos  []string
	list []flag
}

// parseFlags splits args; valued names the flags that take the next
// argument as their value.
func parseFlags(args []string, valued map[string]bool) flags {
	var f flags
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.pos = append(f.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.pos = append(f.pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "--") && len(name) > 1 && valued[name[:1]] {
			// pflag's shorthand: -lapp=x is -l app=x, -nfoo is -n foo, -n=foo is -n foo
			f.list = append(f.list, flag{name: name[:1], val: strings.TrimPrefix(name[1:], "="), has: true})
			continue
		}
		if grouped, used := shortGroup(a, args[i+1:], valued); grouped != nil {
			// pflag's combined shorthands: -Rf DIR is -R -f DIR (trial 46s67e's D1)
			f.list = append(f.list, grouped...)
			i += used
			continue
		}
		if k, v, ok := strings.Cut(name, "="); ok {
			f.list = append(f.list, flag{name: k, val: v, has: true})
			continue
		}
		if valued[name] && i+1 < len(args) && (args[i+1] == "-" || !strings.HasPrefix(args[i+1], "-")) {
			f.list = append(f.list, flag{name: name, val: args[i+1], has: true})
			i++
			continue
		}
		f.list = append(f.list, flag{name: name})
	}
	return f
}

// shortBools are the boolean shorthands kubectl and helm have that a
// script combines with others (-Rf, -it, -iA): kubectl's --recursive,
// --all-namespaces, --watch, --stdin, --tty; helm upgrade's --install.
var shortBools = set("R", "A", "w", "i", "t")

// shortGroup reads a single-dash group of shorthands as pflag does (-Rf DIR
// is -R -f DIR, -Rfx.yaml is -R -f x.yaml): booleans up to a valued one,
// which takes the rest of the group or else the next argument. nil when a
// is no such group (a letter khook does not know as a boolean shorthand);
// used is how many of next it took.
func shortGroup(a string, next []string, valued map[string]bool) (grouped []flag, used int) {
	name := a[1:]
	if strings.HasPrefix(a, "--") || len(name) < 2 || !shortBools[name[:1]] {
		return nil, 0
	}
	for j := 0; j < len(name); j++ {
		c := name[j : j+1]
		if valued[c] {
			if rest := strings.TrimPrefix(name[j+1:], "="); rest != "" {
				return append(grouped, flag{name: c, val: rest, has: true}), 0
			}
			if len(next) > 0 && (next[0] == "-" || !strings.HasPrefix(next[0], "-")) {
				return append(grouped, flag{name: c, val: next[0], has: true}), 1
			}
			return append(grouped, flag{name: c}), 0
		}
		if !shortBools[c] {
			return nil, 0
		}
		grouped = append(grouped, flag{name: c})
	}
	return grouped, 0
}

// get is the last value of any of the names ("" when absent).
func (f flags) get(names ...string) string {
	v := ""
	for _, fl := range f.list {
		for _, n := range names {
			if fl.name == n {
				v = fl.val
			}
		}
	}
	return v
}

// all is every value given under any of names, in order (-f a -f b).
func (f flags) all(names ...string) []string {
	var out []string
	for _, fl := range f.list {
		if slices.Contains(names, fl.name) {
			out = append(out, fl.val)
		}
	}
	return out
}

// is reports a boolean flag given (and not =false).
func (f flags) is(names ...string) bool {
	for _, fl := range f.list {
		for _, n := range names {
			if fl.name == n && fl.val != "false" {
				return true
			}
		}
	}
	return false
}

var helmValued = set("n", "namespace", "version", "repo", "f", "values", "set", "set-string", "set-file", "set-json", "set-literal",
	"timeout", "kube-context", "kubeconfig", "description", "history-max", "post-renderer", "post-renderer-args", "username", "password",
	"ca-file", "cert-file", "key-file", "name", "name-template", "o", "output", "max-history", "registry-config", "repository-cache",
	"repository-config", "kube-apiserver", "kube-token", "kube-as-user", "kube-as-group", "burst-limit", "qps", "labels", "kube-ca-file", "keyring",
	"d", "destination", "untardir", "kube-tls-server-name", "output-dir", "api-versions", "kube-version", "show-only", "s") // pull: -d DIR; template: --output-dir DIR, -s FILE

var kubectlValued = set("restart", "env", "overrides", "image-pull-policy", "port", "pod-running-timeout", "n", "namespace", "f", "filename", "k", "kustomize", "l", "selector", "o", "output", "context", "kubeconfig",
	"for", "timeout", "p", "patch", "type", "patch-file", "subresource", "field-selector", "from-literal", "from-file", "from-env-file",
	"docker-server", "docker-username", "docker-password", "docker-email", "cert", "key", "clusterrole", "role", "serviceaccount",
	"user", "group", "field-manager", "replicas", "image", "c", "container", "grace-period", "cascade", "request-timeout",
	"s", "server", "token", "as", "cluster", "sort-by", "template", "verb", "resource", "resource-name", "non-resource-url", "tcp", "node-port", "clusterip",
	"labels", "target-port", "protocol", "name", "external-ip", "session-affinity", "cluster-ip", "load-balancer-ip", "annotations", "generator") // run, expose

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// gluedFlag is the valued flag name starts with when its value is glued on
// without a space or = (--version"$V", --namespace${NS}); "" when none.
func gluedFlag(name string, valued map[string]bool) string {
	for v := range valued {
		if len(v) < 2 || len(name) <= len(v) || !strings.HasPrefix(name, v) {
			continue
		}
		if c := name[len(v)]; c == '$' || c >= '0' && c <= '9' {
			return v
		}
	}
	return ""
}
