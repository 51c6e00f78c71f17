package shscript

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// recreatedKinds are the kinds a script deletes only to create again
// (kubectl create fails on an existing object): recreating one changes
// nothing an update would not. A Job or a Pod is deleted to run again,
// which an update does not do: those stay a delete and an apply.
var recreatedKinds = map[string]string{
	"secret": "Secret", "secrets": "Secret", "configmap": "ConfigMap", "configmaps": "ConfigMap", "cm": "ConfigMap",
	"serviceaccount": "ServiceAccount", "serviceaccounts": "ServiceAccount", "sa": "ServiceAccount",
	"role": "Role", "roles": "Role", "rolebinding": "RoleBinding", "rolebindings": "RoleBinding",
	"clusterrole": "ClusterRole", "clusterroles": "ClusterRole", "clusterrolebinding": "ClusterRoleBinding", "clusterrolebindings": "ClusterRoleBinding",
}

// deleteThenCreate folds `kubectl delete secret x --ignore-not-found`
// followed by its `kubectl create secret x …` into the apply step that
// makes x: khook's apply updates it in place, and recreates it where a
// field cannot change (onImmutable: recreate), so deleting it on every
// run first would only leave a moment without it. Where the create is
// not carried, the delete is not either: alone it would leave none
// (trial 46zc, Calico Enterprise's pull secret).
func (t *translator) deleteThenCreate() {
	for i := 0; i < len(t.m.Steps); i++ {
		d := t.m.Steps[i]
		kind, name, ns, ok := deletedObject(d.Out)
		if !ok {
			continue
		}
		if j := t.recreatedBy(i, kind, name, ns); j >= 0 {
			a := t.m.Steps[j]
			a.Out.OnImmutable = "recreate"
			why := "it deletes " + kind + " " + name + " for step " + a.Out.Name + " (line " + itoa(a.From.Line) + ") to create it again; khook's apply updates it in place and recreates it where a field cannot change (onImmutable: recreate)"
			// said at its line too: no step cites it (trial 46zv's D1)
			t.m.Info = append(t.m.Info, importer.Note{Loc: d.From, What: "delete " + kind + " " + name, Why: why})
			t.dropStep(i, importer.FateFolded, a.Out.Name, why)
			i--
			continue
		}
		if line := t.recreateNotCarried(d, kind, name); line > 0 {
			t.dropStep(i, importer.FateNotCarried, "", "it deletes "+kind+" "+name+" for line "+itoa(line)+" to create it again, which is not carried: alone it would leave none; carry both by hand")
			i--
		}
	}
}

// deletedObject is the one object a delete step names (secret/x).
func deletedObject(st *importer.OutStep) (kind, name, ns string, ok bool) {
	if st.Delete == nil || st.Delete.Resource == "" || st.Delete.Selector != "" || st.Delete.AllNamespaces {
		return "", "", "", false
	}
	res, name, found := strings.Cut(st.Delete.Resource, "/")
	kind = recreatedKinds[strings.ToLower(strings.SplitN(res, ".", 2)[0])]
	if !found || kind == "" || name == "" || strings.Contains(name, "/") {
		return "", "", "", false
	}
	return kind, name, st.Delete.Namespace, true
}

// recreatedBy is the first step after i, under the same conditions, that
// applies kind/name in ns, or -1.
func (t *translator) recreatedBy(i int, kind, name, ns string) int {
	for j := i + 1; j < len(t.m.Steps); j++ {
		st := t.m.Steps[j].Out
		if st.When != t.m.Steps[i].Out.When || st.Apply == nil {
			continue
		}
		for _, src := range st.Apply.Manifests {
			// a file's objects too: delete configmap coredns, then
			// kubectl apply -f coredns.yaml (trial 46s69k's D1)
			text, _ := t.sourceText(src)
			dec := yaml.NewDecoder(strings.NewReader(text))
			for {
				var obj struct {
					Kind     string `yaml:"kind"`
					Metadata struct {
						Name, Namespace string
					} `yaml:"metadata"`
				}
				if dec.Decode(&obj) != nil {
					break
				}
				ons := obj.Metadata.Namespace
				if ons == "" {
					ons = st.Apply.Namespace
				}
				if obj.Kind == kind && obj.Metadata.Name == name && ons == ns {
					return j
				}
			}
		}
	}
	return -1
}

// recreateNotCarried is the line of the command after step d that
// creates kind name and is not carried (kubectl create secret generic x
// --from-file=…), or 0.
func (t *translator) recreateNotCarried(d *importer.Step, kind, name string) int {
	for k := range t.m.Commands {
		c := &t.m.Commands[k]
		if c.Fate != importer.FateNotCarried || c.File != d.From.File || c.Line <= d.From.Line {
			continue
		}
		words := strings.Fields(c.Text)
		if slices.Contains(words, "create") && slices.Contains(words, name) && slices.ContainsFunc(words, func(w string) bool { return recreatedKinds[strings.ToLower(w)] == kind }) {
			return c.Line
		}
	}
	return t.copiedBack(d, kind, name)
}

// copiedBack is the line after step d that copies kind name from another
// namespace into d's (kubectl get … -o yaml | sed … | kubectl create -f -),
// or creates it with a kubectl create not carried (uncreated), which is
// not carried, or 0 (trial 46s68f's D1: the delete of the copy
// was carried alone, so a re-run deleted it for good).
func (t *translator) copiedBack(d *importer.Step, kind, name string) int {
	for _, cp := range append(slices.Clone(t.nsCopies), t.uncreated...) {
		if cp.at.File == d.From.File && cp.at.Line > d.From.Line && recreatedKinds[strings.ToLower(cp.kind)] == kind && cp.name == name && cp.to == d.Out.Delete.Namespace {
			return cp.at.Line
		}
	}
	return 0
}

// dropStep removes step i (what needed it needs what it needed) and
// gives its command the fate said.
func (t *translator) dropStep(i int, fate importer.Fate, into, why string) {
	st := t.m.Steps[i]
	for _, o := range t.m.Steps {
		if k := slices.Index(o.Out.Needs, st.Out.Name); k >= 0 {
			o.Out.Needs = slices.Delete(slices.Clone(o.Out.Needs), k, k+1)
			for _, n := range st.Out.Needs {
				if !slices.Contains(o.Out.Needs, n) {
					o.Out.Needs = append(o.Out.Needs, n)
				}
			}
		}
	}
	t.m.Steps = slices.Delete(t.m.Steps, i, i+1)
	// what was said of the step is moot with it
	t.m.Info = slices.DeleteFunc(t.m.Info, func(n importer.Note) bool {
		return n.Loc == st.From && strings.Contains(n.What, "step "+st.Out.Name)
	})
	for k := range t.m.Commands {
		c := &t.m.Commands[k]
		if c.Step == st.Out.Name && c.Fate == importer.FateStep {
			c.Fate, c.Step, c.Why = fate, into, why
			if fate == importer.FateNotCarried {
				t.m.NotCarried = append(t.m.NotCarried, importer.Note{Loc: c.Loc, What: c.Text, Why: why})
			}
		}
	}
}
