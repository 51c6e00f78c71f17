package helmfile

import (
	"fmt"
	"github.com/khook/khook/internal/importer"
	yaml "go.yaml.in/yaml/v3"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// hooks turns a release's hooks into steps: kubectl apply, wait, create
// namespace and label, and "wait until these CRDs exist" loops, before
// (prepare, preapply, presync) or after (postsync, postapply, cleanup) the
// release. Anything else is listed as not carried.
func (c *converter) hooks(r *rel) {
	list, _ := r.m["hooks"].([]any)
	for i, x := range list {
		h, _ := x.(map[string]any)
		what := fmt.Sprintf("hooks[%d]", i)
		var events []string
		if ev, ok := h["events"].([]any); ok {
			for _, e := range ev {
				events = append(events, str(e))
			}
		}
		command := str(h["command"])
		if strings.Contains(command, "{{") {
			// {{ requiredEnv "ROOT_DIR" }}/scripts/x.sh: say which script, relative to the spec.
			if out, err := c.r.render(r.st.file, r.lineOf("hooks")-1, r.st.dir, command, releaseData(r.st, r.m)); err == nil {
				command = out
				if filepath.IsAbs(out) {
					command = c.rel(out)
				}
			}
		}
		var args []string
		if a, ok := h["args"].([]any); ok {
			for _, v := range a {
				s := str(v)
				if strings.Contains(s, "{{") {
					out, err := c.r.render(r.st.file, r.lineOf("hooks")-1, r.st.dir, s, releaseData(r.st, r.m))
					if err != nil {
						c.note(r, "hooks", what, "its arguments do not render: "+err.Error())
						continue
					}
					s = out
				}
				args = append(args, s)
			}
		}
		cmdline := strings.TrimSpace(command + " " + strings.Join(args, " "))
		what = fmt.Sprintf("hooks[%d] (%s)", i, shorten(cmdline))
		before, after := false, false
		var other []string
		for _, e := range events {
			switch e {
			case "prepare", "preapply", "presync":
				before = true
			case "postsync", "postapply":
				after = true
			case "cleanup":
				// helmfile sync runs a release's cleanup hooks right after
				// its postsync ones, and fails the release when one fails.
				after = true
				c.infof(r, "hooks", what+" on cleanup", "helmfile sync runs it right after the release (as postsync), and helmfile template, diff and lint run it too; written as a step after the release")
			default:
				other = append(other, e)
			}
		}
		if len(other) > 0 {
			c.note(r, "hooks", what+" on "+strings.Join(other, ", "), "khook runs no hooks at uninstall or cleanup: add a step by hand")
		}
		if !before && !after {
			continue
		}
		steps, why := c.hookSteps(r, command, args)
		if why != "" {
			c.note(r, "hooks", what, why)
			continue
		}
		side := "post"
		if before {
			side = "pre"
		}
		for j, st := range steps {
			st.Name = fmt.Sprintf("%s-%s-%d", r.step.Name, side, len(r.before)+len(r.after)+j+1)
			c.from[st] = importer.Loc{File: r.st.file, Line: r.lineOf("hooks")}
			c.names[st.Name]++
		}
		if before {
			r.before = append(r.before, steps...)
		} else {
			r.after = append(r.after, steps...)
		}
		r.out.Carried = append(r.out.Carried, what+" as "+fmt.Sprint(len(steps))+" step(s)")
	}
	// Chain: before hooks in order, then the release, then after hooks.
	chain := append(append(append([]*importer.OutStep{}, r.before...), r.step), r.after...)
	for i := 1; i < len(chain); i++ {
		chain[i].Needs = appendUnique(chain[i].Needs, chain[i-1].Name)
	}
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

var crdName = regexp.MustCompile(`\b([a-z0-9]([-a-z0-9]*[a-z0-9])?\.){2,}[a-z]{2,}\b`)

// hookSteps maps one hook's command onto steps, or says why it cannot.
func (c *converter) hookSteps(r *rel, command string, args []string) ([]*importer.OutStep, string) {
	base := filepath.Base(command)
	switch base {
	case "kubectl":
		return c.kubectl(r, args)
	case "helm":
		// helm dependency build|update CHART of the release's own local
		// chart: what a helm step does with a Chart.lock, or with
		// dependencyUpdate: true.
		if len(args) == 3 && (args[0] == "dependency" || args[0] == "dep") && (args[1] == "build" || args[1] == "update") &&
			r.step.Helm != nil && filepath.Clean(c.rel(abs(r.st.dir, args[2]))) == filepath.Clean(r.step.Helm.Chart) {
			if _, err := os.Stat(filepath.Join(abs(r.st.dir, args[2]), "Chart.lock")); err != nil || args[1] == "update" {
				r.step.Helm.DependencyUpdate = true
			}
			return nil, ""
		}
	case "sh", "bash":
		// sh -c SCRIPT, and its combined forms (-ec, -euc, -c with -e before).
		for i, a := range args {
			if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
				break
			}
			if strings.Contains(a, "c") && i+1 < len(args) {
				return c.script(r, args[i+1])
			}
		}
		return nil, "a shell command without -c SCRIPT: khook runs no shell, add a job step by hand"
	}
	return nil, "khook runs no commands of its own: add a job step (or an apply step) by hand"
}

// script reads a shell script made of kubectl apply/wait commands and
// "until kubectl get crd X; do sleep; done" loops.
func (c *converter) script(r *rel, text string) ([]*importer.OutStep, string) {
	var steps []*importer.OutStep
	text = strings.ReplaceAll(text, "\\\n", " ")
	text, why := unrollFor(text)
	if why != "" {
		return nil, why
	}
	for _, raw := range regexp.MustCompile(`\n|&&|;`).Split(text, -1) {
		line := strings.TrimSpace(raw)
		for _, kw := range []string{"do ", "then ", "else "} {
			line = strings.TrimSpace(strings.TrimPrefix(line, kw))
		}
		// until kubectl wait ...; do sleep; done retries a wait: a wait step.
		retry := false
		if w := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "until "), "while ! ")); w != line && strings.HasPrefix(w, "kubectl wait ") {
			line, retry = w, true
		}
		switch {
		case line == "", strings.HasPrefix(line, "#"), line == "do", line == "done", strings.HasPrefix(line, "sleep"),
			strings.HasPrefix(line, "echo"), strings.HasPrefix(line, "set -"), line == "fi", line == "then":
			continue
		case (strings.HasPrefix(line, "until") || strings.HasPrefix(line, "while")) && strings.Contains(line, "kubectl get crd"),
			strings.HasPrefix(line, "kubectl get crd"):
			names := crdName.FindAllString(strings.SplitN(line, "kubectl get crd", 2)[1], -1)
			if len(names) == 0 {
				return nil, "a wait loop whose CRD names are not written in it: add a wait step by hand"
			}
			for _, n := range names {
				steps = append(steps, &importer.OutStep{Wait: &importer.OutWait{For: "condition=Established", On: "customresourcedefinition/" + n}})
			}
		case strings.HasPrefix(line, "kubectl "):
			st, why := c.kubectl(r, strings.Fields(line)[1:])
			if why != "" {
				return nil, why
			}
			for _, x := range st {
				if retry { // the loop retries past kubectl's --timeout: the step's default timeout applies
					x.Timeout = ""
				}
			}
			steps = append(steps, st...)
		default:
			return nil, "a shell script with a command khook does not map (" + shorten(line) + "): add a job step by hand"
		}
	}
	if len(steps) == 0 {
		return nil, "a script with no kubectl command khook maps"
	}
	return steps, ""
}

var forLoop = regexp.MustCompile(`(?s)\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([^;\n]*)[;\n]\s*do\b`)

// unrollFor expands `for X in A B; do BODY; done` loops over literal words
// into BODY once per word with $X/${X} replaced, so the kubectl commands in
// them map one by one.
func unrollFor(text string) (string, string) {
	for {
		loc := forLoop.FindStringSubmatchIndex(text)
		if loc == nil {
			return text, ""
		}
		v, words := text[loc[2]:loc[3]], strings.Fields(text[loc[4]:loc[5]])
		for _, w := range words {
			if strings.ContainsAny(w, "$`*?(") {
				return "", "a for loop over words not written in it (" + shorten(w) + "): add the steps by hand"
			}
		}
		// the matching done: count do/done words after the loop's do.
		depth, end, bodyEnd := 1, -1, -1
		toks := regexp.MustCompile(`\b(do|done)\b`).FindAllStringIndex(text[loc[1]:], -1)
		for _, t := range toks {
			if text[loc[1]+t[0]:loc[1]+t[1]] == "do" {
				depth++
			} else if depth--; depth == 0 {
				bodyEnd, end = loc[1]+t[0], loc[1]+t[1]
				break
			}
		}
		if end < 0 {
			return "", "a for loop without its done"
		}
		body := text[loc[1]:bodyEnd]
		var out strings.Builder
		for _, w := range words {
			w = strings.Trim(w, `"'`)
			b := strings.ReplaceAll(body, "${"+v+"}", w)
			b = regexp.MustCompile(`\$`+v+`\b`).ReplaceAllString(b, w)
			out.WriteString(b + "\n")
		}
		text = text[:loc[0]] + out.String() + text[end:]
	}
}

// kubectl maps one kubectl command line (a wait on several resources is
// one wait step per resource).
func (c *converter) kubectl(r *rel, args []string) ([]*importer.OutStep, string) {
	var verb string
	var pos, files, kusts []string
	flags := map[string]string{}
	bools := map[string]bool{}
	valued := map[string]string{"-f": "filename", "--filename": "filename", "-k": "kustomize", "--kustomize": "kustomize",
		"-n": "namespace", "--namespace": "namespace", "--for": "for", "--timeout": "timeout", "-l": "selector", "--selector": "selector",
		"--field-manager": "field-manager", "--context": "context", "--kubeconfig": "kubeconfig",
		"-p": "patch", "--patch": "patch", "--type": "type"}
	for i := 0; i < len(args); i++ {
		a := strings.Trim(args[i], `"'`)
		name, val, hasVal := strings.Cut(a, "=")
		if key, ok := valued[name]; ok {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, "kubectl " + name + " has no value"
				}
				i++
				val = strings.Trim(args[i], `"'`)
			}
			switch key {
			case "filename":
				files = append(files, val)
			case "kustomize":
				kusts = append(kusts, val)
			default:
				flags[key] = val
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			bools[strings.TrimLeft(name, "-")] = true
			continue
		}
		if verb == "" {
			verb = a
			continue
		}
		pos = append(pos, a)
	}
	if flags["context"] != "" || flags["kubeconfig"] != "" {
		return nil, "it targets another cluster (--context/--kubeconfig): khook runs one cluster per spec"
	}
	ns := flags["namespace"]
	switch verb {
	case "apply", "create":
		if verb == "create" && len(pos) == 2 && (pos[0] == "namespace" || pos[0] == "ns") {
			return []*importer.OutStep{{Apply: &importer.OutApply{Manifests: []importer.OutSource{{Inline: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + pos[1] + "\n"}}}}}, ""
		}
		for b := range bools {
			switch b {
			case "server-side", "force-conflicts", "overwrite", "wait", "validate", "save-config":
			default:
				return nil, "kubectl " + verb + " --" + b + " has no khook equivalent"
			}
		}
		if verb == "create" && !bools["save-config"] && len(files)+len(kusts) == 0 {
			return nil, "kubectl create of this kind has no khook equivalent: write the object in an apply step"
		}
		if fm := flags["field-manager"]; fm != "" {
			c.infof(r, "hooks", "kubectl "+verb+" --field-manager="+fm, "khook applies as its own field manager; a controller that applies server-side with force (Flux's kustomize-controller) takes the fields over")
		}
		a := &importer.OutApply{Namespace: ns, ServerSide: bools["server-side"]}
		for _, f := range files {
			if strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
				a.Manifests = append(a.Manifests, importer.OutSource{URL: f})
				continue
			}
			p := abs(r.st.dir, f)
			st, err := os.Stat(p)
			if err != nil {
				return nil, "its file " + f + " cannot be read: " + pathErr(err)
			}
			if !st.IsDir() {
				a.Manifests = append(a.Manifests, importer.OutSource{File: c.rel(p)})
				continue
			}
			var names []string
			for _, pat := range []string{"*.yaml", "*.yml", "*.json"} {
				m, _ := filepath.Glob(filepath.Join(p, pat))
				names = append(names, m...)
			}
			sort.Strings(names)
			for _, n := range names {
				a.Manifests = append(a.Manifests, importer.OutSource{File: c.rel(n)})
			}
		}
		for _, k := range kusts {
			if _, err := os.Stat(abs(r.st.dir, k)); err != nil {
				return nil, "its kustomization " + k + " cannot be read: " + pathErr(err)
			}
			a.Manifests = append(a.Manifests, importer.OutSource{Kustomize: c.rel(abs(r.st.dir, k))})
		}
		if len(a.Manifests) == 0 {
			return nil, "kubectl " + verb + " without -f or -k"
		}
		return []*importer.OutStep{{Apply: a}}, ""
	case "wait":
		if flags["for"] == "" || len(pos) == 0 {
			return nil, "kubectl wait without --for or a resource"
		}
		var targets []string
		switch {
		case !strings.Contains(pos[0], "/") && len(pos) > 1:
			for _, n := range pos[1:] { // kubectl wait KIND NAME...
				targets = append(targets, pos[0]+"/"+n)
			}
		default:
			for _, p := range pos {
				if !strings.Contains(p, "/") && len(pos) > 1 {
					return nil, "kubectl wait mixes KIND/NAME and KIND forms: write the wait steps by hand"
				}
				targets = append(targets, p)
			}
		}
		if len(targets) == 1 && !strings.Contains(targets[0], "/") && flags["selector"] == "" && !bools["all"] {
			return nil, "kubectl wait names a kind without a name or selector"
		}
		// --for=create (kubectl 1.31): until the object exists. A wait on a
		// named object that does not exist yet waits for it; cel=true then holds.
		forCond := flags["for"]
		if forCond == "create" {
			forCond = "cel=true"
		}
		var steps []*importer.OutStep
		for _, on := range targets {
			st := &importer.OutStep{Wait: &importer.OutWait{For: forCond, On: on, Namespace: ns, Selector: flags["selector"]}}
			if t := flags["timeout"]; t != "" {
				st.Timeout = t
			}
			steps = append(steps, st)
		}
		return steps, ""
	case "rollout":
		if len(pos) < 2 || (pos[0] != "restart" && pos[0] != "status") {
			return nil, "kubectl rollout of this form has no khook equivalent"
		}
		target := pos[1]
		if len(pos) == 3 && !strings.Contains(target, "/") {
			target += "/" + pos[2]
		}
		ro := &importer.OutRollout{Namespace: ns}
		if ro.Namespace == "" {
			ro.Namespace = "default"
		}
		if pos[0] == "restart" {
			ro.Restart = target
		} else {
			ro.Status = target
		}
		return []*importer.OutStep{{Rollout: ro}}, ""
	case "label":
		if len(pos) < 3 || !(pos[0] == "namespace" || pos[0] == "ns") {
			if len(pos) >= 2 && strings.Contains(pos[0], "/") {
				pos = append(strings.SplitN(pos[0], "/", 2), pos[1:]...)
			} else {
				return nil, "kubectl label of this form has no khook equivalent"
			}
		}
		labels := map[string]any{}
		for _, kv := range pos[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				if strings.HasSuffix(kv, "-") {
					labels[strings.TrimSuffix(kv, "-")] = nil
					continue
				}
				return nil, "kubectl label " + kv + " is no key=value"
			}
			labels[k] = v
		}
		kind := pos[0]
		if kind == "ns" {
			kind = "namespace"
		}
		return []*importer.OutStep{{Patch: &importer.OutPatch{Target: kind + "/" + pos[1], Namespace: ns, Type: "merge", Patch: map[string]any{"metadata": map[string]any{"labels": labels}}}}}, ""
	case "patch":
		// kubectl patch KIND NAME | KIND/NAME -p PATCH [--type strategic|merge|json]
		if len(pos) == 2 && !strings.Contains(pos[0], "/") {
			pos = []string{pos[0] + "/" + pos[1]}
		}
		if len(pos) != 1 || !strings.Contains(pos[0], "/") || flags["patch"] == "" || len(files) > 0 {
			return nil, "kubectl patch of this form (one object and an inline -p patch) has no khook equivalent: add a patch step by hand"
		}
		typ := flags["type"]
		switch typ {
		case "":
			typ = "strategic"
		case "strategic", "merge", "json":
		default:
			return nil, "kubectl patch --type " + typ + " has no khook equivalent"
		}
		var body any
		if err := yaml.Unmarshal([]byte(flags["patch"]), &body); err != nil || body == nil {
			return nil, "kubectl patch -p is not JSON or YAML"
		}
		target := pos[0]
		if k, n, _ := strings.Cut(target, "/"); k == "ns" {
			target = "namespace/" + n
		}
		return []*importer.OutStep{{Patch: &importer.OutPatch{Target: target, Namespace: ns, Type: typ, Patch: stringKeys(body)}}}, ""
	}
	return nil, "kubectl " + verb + " has no khook equivalent: add a step by hand"
}
