package shscript

import (
	"cmp"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// written is a file the script writes from a here-document (cat <<EOF >
// values.yaml, tee x.yaml <<EOF) or envsubst: a step that then reads it (kubectl
// apply -f, helm -f) takes the text inline, as bash's run would find it
// on a clean checkout, instead of a file that is not in the repository.
type written struct {
	// helm template > f: the command and its flags; a kubectl apply -f f
	// is the helm step, as with helm template | kubectl apply -f -
	tmpl      *cmd
	tmplFlags flags
	outDir    bool // helm template --output-dir: the manifests under the directory
	// prev is an earlier helm template --output-dir into the same DIR: helm
	// writes each chart's own DIR/<chart>, so its files stay beside this
	// one's, a command of its own (trial 46s70f's D3: counted as one)
	prev *written
	// partBy is where a kubectl apply not carried reads part of what it
	// renders (DIR/<chart>/templates/x.yaml): said with the render
	partBy []string
	// sure: written wherever the script reaches the line (no branch, no
	// fallback), so a test of the path after it holds (46zx's D2)
	sure bool

	text  string
	known bool
	why   string // why the text is not known
	at    importer.Loc
	notes []importer.Note // the commands that made it, said as not carried when no step reads the file
	read  bool
	// info is what the envsubst that wrote it says of its variables, said
	// when a step reads the text, not when nothing does (trial 46s67h's D6)
	info []importer.Note
	// defaults is the chart whose default values helm show values wrote
	// to the file (its text is the chart's, not known here)
	defaults string
	// readBy is a command khook does not run that reads the file (csplit
	// "$R" …, FILE:LINE name): said with the notes when no step reads it
	readBy string
	// from is the repository file a cp copied (its text as committed,
	// with refMark for the variables sed put in); "" for a here-document
	from    string
	fromAbs string
	edited  bool // sed changed it: else a step reads the repository file itself
	// when is the when: it was written under (a flag's branch): a step
	// under the same when: reads its text, any other finds it unknown
	when []string
	// url is the URL a curl or wget downloaded the file from (downloads.go)
	url string
	// made is the kubectl create … --dry-run -o yaml > f that printed
	// the object (text): its fate is the reading apply's, said once
	made *importer.Command
}

// createWrites records kubectl create … --dry-run=client -o yaml > FILE:
// the file holds the object, as the pipe into kubectl apply -f - does,
// and the apply -f FILE that reads it carries it (46zn's D4). False when
// the object goes nowhere a step can read.
func (t *translator) createWrites(x *cmd, f flags) bool {
	key := t.outFile(x)
	if o := f.get("o", "output"); key == "" || o != "yaml" && o != "json" || len(f.pos) < 2 {
		return false
	}
	made := importer.Command{Loc: t.loc(x.stmt), Text: t.text(x.stmt), Fate: importer.FateFolded}
	w := &written{at: made.Loc, made: &made}
	if obj, ok := t.createObject(x, f); !ok { // named not carried there
		w.made, w.why = nil, "the object kubectl create prints there, which khook does not carry"
	} else if w.text, _ = renderObject(obj); w.text != "" {
		w.known = true
	}
	t.wrote[key] = t.undecidedWrite(w)
	return true
}

// outFile is the file a command's > writes (its writeKey), "" for none.
func (t *translator) outFile(x *cmd) string {
	var key string
	for _, r := range x.stmt.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.ClbOut {
			if p, ok, _ := t.eval(r.Word); ok && p != "/dev/null" {
				key = t.writeKey(p)
			}
		}
	}
	return key
}

// sayMade gives the kubectl create that printed w its fate, once.
func (t *translator) sayMade(w *written, fate importer.Fate, why string) {
	if w.made == nil {
		return
	}
	c := *w.made
	c.Fate, c.Why, w.made = fate, why, nil
	t.m.Commands = append(t.m.Commands, c)
}

// copied is the repository file p is an unchanged copy of ("" if none):
// a step reads that file, as the copy holds its text.
func (t *translator) copied(p string) string {
	w := t.wrote[t.writeKey(p)]
	if w == nil || w.fromAbs == "" || w.edited || w.outside(t.when) {
		return ""
	}
	w.read = true
	return w.fromAbs
}

// writeFiles records the files a cat or tee writes its here-document to.
// `>>` appends to what the script wrote before; appended to a file in the
// repository, the file's text is not the here-document's alone, so that
// file stays a file.
func (t *translator) writeFiles(x *cmd, name string) {
	var targets []struct {
		p      string
		append bool
	}
	for _, r := range x.stmt.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.ClbOut {
			if p, ok, _ := t.eval(r.Word); ok && p != "/dev/null" {
				targets = append(targets, struct {
					p      string
					append bool
				}{p, r.Op == syntax.AppOut})
			}
		}
	}
	if name == "tee" {
		targets = append(targets, struct {
			p      string
			append bool
		}{x.args[1], false})
	}
	note := t.noteAt(x.stmt, t.text(x.stmt), "khook runs no shell commands; no step reads the file it writes, so nothing of it is carried")
	for _, tg := range targets {
		key := t.writeKey(tg.p)
		w := t.wrote[key]
		switch {
		case tg.append && w != nil:
			c := *w // a copy: the text before stays another branch's
			c.notes = append(append([]importer.Note(nil), w.notes...), note)
			c.text += x.stdin.text
			c.known = c.known && x.stdin.known
			if c.why == "" {
				c.why = x.stdin.why
			}
			t.wrote[key] = t.undecidedWrite(&c)
			continue
		case tg.append && !strings.Contains(key, "${") && exists(key):
			t.recordMade(x, name)
			t.m.NotCarried = append(t.m.NotCarried, t.noteAt(x.stmt, t.text(x.stmt), "khook runs no shell commands; it appends to "+tg.p+", which is in the repository: a step reads the file as committed"))
			continue
		}
		t.wrote[key] = t.undecidedWrite(&written{text: x.stdin.text, known: x.stdin.known, why: x.stdin.why, at: t.loc(x.stmt), notes: []importer.Note{note}})
	}
}

// writeKey is a written file's path as the script names it: absolute,
// or as written when a variable of its run is in it ($TMP/x.yaml).
func (t *translator) writeKey(p string) string {
	if strings.Contains(p, "${") {
		return p
	}
	return t.abs(p)
}

// outside: a command under when reads w, written under a when: it does
// not hold.
func (w *written) outside(when []string) bool {
	return slices.ContainsFunc(w.when, func(c string) bool { return !slices.Contains(when, c) })
}

// readWritten is the text of a file the script wrote from a
// here-document, when p is one; ok false when it is not. A text khook
// cannot know at import is said at the reading command.
func (t *translator) readWritten(x *cmd, p string) (string, bool, bool) {
	w := t.wrote[t.writeKey(p)]
	if w == nil || w.url != "" {
		// a download the script edits: the step reads the file the run
		// makes (download and edit it in CI before khook), said there
		return "", false, false
	}
	w.read = true
	if rel := t.display(p); filepath.IsAbs(p) && !strings.HasPrefix(rel, "../../") {
		p = rel // $SCRIPT_DIR/../base/x.yaml: said as a path of the checkout
	}
	if w.known && w.outside(t.when) || !w.known {
		t.sayMade(w, importer.FateReadOnly, "--dry-run changes nothing in the cluster: it writes "+p+", which the apply at "+t.loc(x.stmt).String()+" cannot carry (said there)")
	}
	if w.known && w.outside(t.when) {
		// the command reads it whatever the run decides (trial 46s67g's D2: "does not run under" read as false)
		t.account(x.stmt, importer.FateNotCarried, "", p+" is the text the script writes at "+w.at.String()+" only where "+strings.Join(w.when, " && ")+" (a condition only the run decides), while this command runs whatever it decides: write this step by hand, with a when: for each case")
		return "", true, false
	}
	if !w.known {
		t.account(x.stmt, importer.FateNotCarried, "", p+" is written by the script at "+w.at.String()+" with text only known when it runs ("+w.why+")")
		return "", true, false
	}
	text := unmarkRefs(w.text, w.from != "")
	if w.made != nil {
		t.sayMade(w, importer.FateFolded, "the object it prints is written to "+p+", and the apply at "+t.loc(x.stmt).String()+" that reads it carries it")
		t.info(x.stmt, p, "the object kubectl create writes at "+w.at.String()+" is inline here")
		return text, true, true
	}
	if w.from == "" {
		t.m.Info = append(t.m.Info, w.info...)
		t.info(x.stmt, p, "the script writes it at "+w.at.String()+": the text it writes is inline here")
		return text, true, true
	}
	inPlace := w.from == t.display(t.writeKey(p))
	if secretKind.MatchString(text) {
		made := "copied at " + w.at.String()
		if inPlace { // sed -i on the file itself (46zzc's N3)
			made = "edited in place at " + w.at.String() + " (sed -i)"
		}
		t.account(x.stmt, importer.FateNotCarried, "", "a Secret from a file ("+w.from+", "+made+"): khook never copies a file's content into the spec; apply it as a sops-encrypted manifest or build it from secret variables")
		return "", true, false
	}
	how := "the script makes it at " + w.at.String() + " from " + w.from + " (cp, then sed): the text it makes"
	if inPlace {
		how = "the script edits it in place at " + w.at.String() + " (sed -i): the edited text"
	}
	t.info(x.stmt, p, how+" is inline here, so a later change to "+w.from+" is not followed until you import again")
	return text, true, true
}

// unreadWrites says each file written that no step reads.
func (t *translator) unreadWrites() {
	// a line that writes a file a step reads (a function called with
	// another file before) is not said, whichever of its files comes
	// first: the map's order changes from run to run
	seen := map[importer.Loc]bool{}
	keys := slices.Sorted(maps.Keys(t.wrote))
	for _, w := range t.unrendered {
		for _, r := range renderChain(w) {
			t.unreadRender(r)
		}
	}
	for _, k := range keys {
		for _, r := range renderChain(t.wrote[k].prev) {
			t.unreadRender(r)
		}
	}
	for _, k := range keys {
		seen[t.wrote[k].at] = seen[t.wrote[k].at] || t.wrote[k].read
	}
	for _, k := range keys {
		w := t.wrote[k]
		switch {
		case w.read || seen[w.at]:
		case w.tmpl != nil:
			t.unreadRender(w)
		case w.made != nil:
			t.sayMade(w, importer.FateReadOnly, "--dry-run changes nothing in the cluster: it writes the object to a file no kubectl apply of the script reads")
		case w.readBy != "":
			// envsubst < m.yaml > "$R"; csplit "$R" …: read, by a command
			// not carried either (trial 46s67h's D6)
			for _, n := range w.notes {
				n.Why = strings.Replace(n.Why, "no step reads the file it writes", "only "+w.readBy+" reads the file it writes, which khook does not run either", 1)
				t.m.NotCarried = append(t.m.NotCarried, n)
			}
		default:
			t.m.NotCarried = append(t.m.NotCarried, w.notes...)
		}
		seen[w.at] = true
	}
}

// renders records helm template > FILE; false when it writes no file.
func (t *translator) renders(x *cmd, f flags) bool {
	key, dir := t.outFile(x), false
	if d := f.get("output-dir"); d != "" && key == "" {
		// helm template … --output-dir DIR: DIR/<chart>/templates/*.yaml
		// (trial 46zx's D2: the apply of DIR named no maker)
		key, dir = t.writeKey(d), true
	}
	if key == "" {
		return false
	}
	w := &written{tmpl: x, tmplFlags: f, at: t.loc(x.stmt), outDir: dir, sure: t.unconditional()}
	if old := t.wrote[key]; old != nil && old.tmpl != nil {
		switch {
		case old.at == w.at && slices.Equal(old.tmpl.args, x.args):
			w.prev = old.prev // the same command, walked again
		case dir && old.outDir && old.sure && w.sure:
			w.prev = old
		default:
			// helm template > f written over, or under another branch:
			// still a command of the script (trial 46s70f's D3)
			t.unrendered = append(t.unrendered, old)
		}
	}
	t.wrote[key] = w
	return true
}

// renderChain is w and the earlier renders into its DIR, first first.
func renderChain(w *written) []*written {
	var all []*written
	for ; w != nil; w = w.prev {
		all = append([]*written{w}, all...)
	}
	return all
}

// unreadRender accounts a helm template whose manifests no step reads.
func (t *translator) unreadRender(w *written) {
	if w.read {
		return
	}
	w.read = true
	if len(w.partBy) > 0 {
		t.account(w.tmpl.stmt, importer.FateReadOnly, "", "helm template changes nothing in the cluster: it renders the chart into "+w.tmplFlags.get("output-dir")+", where only the kubectl apply at "+strings.Join(w.partBy, ", ")+" reads, which is not carried (said there)")
		return
	}
	if w.outDir {
		t.account(w.tmpl.stmt, importer.FateReadOnly, "", "helm template writes manifests under "+w.tmplFlags.get("output-dir")+" that no kubectl apply of the script reads")
		return
	}
	t.account(w.tmpl.stmt, importer.FateReadOnly, "", "helm template writes manifests to a file no kubectl apply of the script reads")
}

// renderedApply is kubectl apply -f FILE of a helm template > FILE: the
// helm step, and the apply folded into it.
func (t *translator) renderedApply(x *cmd, f flags) bool {
	files := f.all("f", "filename")
	if len(files) != 1 {
		return false
	}
	w := t.wrote[t.writeKey(strings.TrimSuffix(files[0], "/"))]
	if w == nil {
		return t.renderedPart(x, f, files[0])
	}
	if w.tmpl == nil {
		return false
	}
	chain := renderChain(w)
	if w.outDir && !f.is("R", "recursive") {
		for _, r := range chain {
			if !r.read {
				r.read = true
				t.account(r.tmpl.stmt, importer.FateReadOnly, "", "helm template writes manifests to "+files[0]+", which no carried apply reads")
			}
		}
		t.account(x.stmt, importer.FateNotCarried, "", "helm template --output-dir at "+w.at.String()+" writes the manifests under "+files[0]+"/<chart>/templates, and kubectl apply -f without -R reads only the directory's own files: the script's apply finds none (kubectl: no objects passed to apply); with -R it is the chart's helm step")
		return true
	}
	// -R of a DIR several helm template --output-dir filled: each chart's
	// helm step, in the script's order (trial 46s70f's D3)
	n := len(t.m.Steps)
	var at []string
	for i, r := range chain {
		r.read = true
		if later := t.sameChartLater(chain[i+1:], r); later != nil {
			// the same chart's folder rendered again: its files written over
			t.account(r.tmpl.stmt, importer.FateReadOnly, "", "helm template --output-dir at "+later.at.String()+" renders the same chart into "+w.tmplFlags.get("output-dir")+" over what this one writes, before kubectl apply reads it")
			continue
		}
		at = append(at, r.at.String())
		t.helmInstall(r.tmpl, r.tmplFlags, "template")
	}
	if len(t.m.Steps) > n {
		t.account(x.stmt, importer.FateFolded, t.m.Steps[len(t.m.Steps)-1].Out.Name, "it applies what helm template wrote at "+strings.Join(at, ", ")+": the helm step installs the chart")
	}
	return true
}

// changed marks a file the script made as changed by a command khook does
// not run (echo >> f, yq -i f, perl -pi f): its text is then only known
// when the script runs, and a copy is no longer the repository file.
func (t *translator) changed(p string, x *cmd) {
	key := t.writeKey(p)
	w := t.wrote[key]
	if w == nil {
		return
	}
	c := *w // a copy: the text before stays another branch's
	c.known, c.edited, c.why = false, true, "changed at "+t.loc(x.stmt).String()+" by "+x.args[0]+", which khook does not run"
	t.wrote[key] = &c
}

// redirected marks the files a command writes to with > or >> as changed.
func (t *translator) redirected(x *cmd) {
	for _, r := range x.stmt.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.ClbOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
			if p, ok, _ := t.eval(r.Word); ok {
				t.overwritten(p, x)
				t.changed(p, x)
			}
		}
	}
}

// kubectlWrites is a kubectl command, and kubectl get … -o yaml > f
// recorded as f's maker (46zzg's D7: the dump of a live object, edited
// and applied back); not one whose text the import traced (create
// --dry-run -o yaml > f).
func (t *translator) kubectlWrites(x *cmd, base string) {
	t.kubectl(x)
	if key := t.outFile(x); key == "" || t.wrote[key] != nil {
		return
	}
	if f := parseFlags(x.args[1:], kubectlValued); len(f.pos) > 0 {
		base += " " + f.pos[0]
	}
	t.recordMade(&cmd{stmt: x.stmt, args: x.args[:1]}, base)
}

// overwritten: a command khook does not run writes over a committed file
// (docker run … &> secret.json): what a step reads after it is the run's
// text, not the commit's (trial 46zz's D1: an empty committed file applied).
func (t *translator) overwritten(p string, x *cmd) {
	key := t.writeKey(p)
	if t.wrote[key] != nil || strings.Contains(key, "${") || strings.HasPrefix(p, "/dev/") {
		return
	}
	if st, err := os.Stat(key); err == nil && st.Mode().IsRegular() {
		t.wrote[key] = &written{at: t.loc(x.stmt), read: true, why: "written over by " + x.args[0] + " at " + t.loc(x.stmt).String() + ", which khook does not run, so the committed file is not what it reads"}
	}
}

// undecidedWrite: a file written under a condition khook cannot decide,
// or under a when:, has a text only the run knows.
func (t *translator) undecidedWrite(w *written) *written {
	if t.undecidedDepth == 0 && len(t.when) == 0 {
		w.sure = t.cond == 0
		return w
	}
	if t.undecidedDepth == 0 && w.known {
		// cat <<EOF > rc.yaml under if [ "$GPU" = true ]: known where GPU is
		w.when = slices.Clone(t.when)
		return w
	}
	w.known, w.edited, w.why = false, true, "written under a condition only the run decides"
	return w
}

// unconditional: the line runs wherever the script gets to it.
func (t *translator) unconditional() bool {
	return t.cond == 0 && t.undecidedDepth == 0 && len(t.when) == 0
}

// renderedPart is kubectl apply -f DIR/<chart>/… of what a helm template
// --output-dir DIR renders when the script runs (trial 46s70f's D4: "nothing
// in the script makes it", the apply of wikijs-demo's rendered Secret):
// with -R of DIR/<chart>, the chart's helm step; any other part of it
// named with the line that renders it, as khook's helm step installs a
// whole chart. False when no render holds the path.
func (t *translator) renderedPart(x *cmd, f flags, file string) bool {
	abs := t.writeKey(strings.TrimSuffix(file, "/"))
	dir, chain := t.renderDir(abs)
	if chain == nil {
		return false
	}
	rel, _ := filepath.Rel(dir, abs)
	name, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	var r *written
	var at, names []string
	for _, c := range chain {
		if n := t.renderedChart(c); n == name {
			r = c
		} else {
			names = append(names, cmp.Or(n, "?"))
		}
		at = append(at, c.at.String())
	}
	switch {
	case r == nil && !slices.Contains(names, "?"):
		t.account(x.stmt, importer.FateNotCarried, "", file+" is under "+t.display(dir)+", where helm template --output-dir at "+strings.Join(at, ", ")+" renders the charts "+strings.Join(names, ", ")+", none named "+name+", so bash's command fails too: check the path")
		return true
	case r == nil:
		r = chain[len(chain)-1]
	case rest == "" && !f.is("R", "recursive"):
		r.partBy = appendNew(r.partBy, t.loc(x.stmt).String())
		t.account(x.stmt, importer.FateNotCarried, "", "helm template --output-dir at "+r.at.String()+" writes the chart's manifests under "+file+"/templates, and kubectl apply -f without -R reads only the directory's own files: the script's apply finds none (kubectl: no objects passed to apply); with -R it is the chart's helm step")
		return true
	case rest == "":
		r.read = true
		n := len(t.m.Steps)
		t.helmInstall(r.tmpl, r.tmplFlags, "template")
		if len(t.m.Steps) > n {
			t.account(x.stmt, importer.FateFolded, t.m.Steps[n].Out.Name, "it applies what helm template wrote at "+r.at.String()+": the helm step installs the chart")
		}
		return true
	}
	from := chain // a packaged chart's folder is not known: any of them
	if t.renderedChart(r) == name {
		from, at = []*written{r}, []string{r.at.String()}
	}
	for _, c := range from {
		c.partBy = appendNew(c.partBy, t.loc(x.stmt).String())
	}
	what, advice := "the object it renders", "with that command's values as khook variables"
	if b, err := os.ReadFile(filepath.Join(t.abs(r.tmplFlags.pos[len(r.tmplFlags.pos)-1]), rest)); err == nil && secretKind.Match(b) {
		what, advice = "the Secret it renders", "its values from secret variables, never its rendered text"
	}
	t.account(x.stmt, importer.FateNotCarried, "", file+" is what helm template --output-dir at "+strings.Join(at, ", ")+" renders when the script runs, and khook's helm step installs a whole chart, not part of one: write "+what+" as a manifest in an apply: step, "+advice)
	return true
}

// appendNew appends s unless list has it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// sameChartLater is the first of later that renders r's chart folder, nil
// for none (or a chart whose folder is not known).
func (t *translator) sameChartLater(later []*written, r *written) *written {
	name := t.renderedChart(r)
	for _, l := range later {
		if name != "" && t.renderedChart(l) == name {
			return l
		}
	}
	return nil
}

// renderDir is the DIR of the helm template --output-dir DIR whose
// output abs lies under, and the renders into it, first first.
func (t *translator) renderDir(abs string) (string, []*written) {
	for _, k := range slices.Sorted(maps.Keys(t.wrote)) {
		if w := t.wrote[k]; w.outDir && w.tmpl != nil && k != abs && within(abs, k) {
			return k, renderChain(w)
		}
	}
	return "", nil
}

// renderedChart is the folder helm template --output-dir writes a
// chart's manifests under: its Chart.yaml's name, else the last part of
// its reference ("" when not known: a packaged chart).
func (t *translator) renderedChart(w *written) string {
	if len(w.tmplFlags.pos) < 3 {
		return ""
	}
	chart := w.tmplFlags.pos[2]
	var meta struct{ Name string }
	if b, err := os.ReadFile(filepath.Join(t.abs(chart), "Chart.yaml")); err == nil && yaml.Unmarshal(b, &meta) == nil {
		return meta.Name
	}
	if strings.HasSuffix(chart, ".tgz") || exists(t.abs(chart)) {
		return ""
	}
	return path.Base(strings.TrimSuffix(chart, "/"))
}
