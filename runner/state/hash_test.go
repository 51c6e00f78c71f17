package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustHash(t *testing.T, st *spec.Step, dir string) string {
	t.Helper()
	h, err := Hash(st, dir)
	if err != nil {
		t.Fatalf("Hash(%s): %v", st.Name, err)
	}
	if !strings.HasPrefix(h, hashPrefix) {
		t.Fatalf("Hash(%s) = %q, want a %s prefix", st.Name, h, hashPrefix)
	}
	return h
}

func helmStep(values map[string]any, files ...string) *spec.Step {
	h := &spec.Helm{Chart: "demo", Repo: "https://charts.example", Version: "1.2.3", Release: "demo", Namespace: "default", Values: values}
	for _, f := range files {
		h.ValuesFrom = append(h.ValuesFrom, spec.Source{File: f})
	}
	return &spec.Step{Name: "demo", Helm: h}
}

func TestHashIgnoresKeyOrderAndSchedulingFields(t *testing.T) {
	dir := t.TempDir()
	a := helmStep(map[string]any{"a": 1, "b": map[string]any{"x": "1", "y": true}})
	b := helmStep(map[string]any{"b": map[string]any{"y": true, "x": "1"}, "a": 1})
	b.Needs = []string{"other"}
	b.When = `vars.X == "1"`
	b.Timeout = spec.Duration(time.Hour)
	b.Retries = 3
	b.RetryDelay = spec.Duration(time.Second)
	b.OnError = spec.OnErrorContinue
	if ha, hb := mustHash(t, a, dir), mustHash(t, b, dir); ha != hb {
		t.Errorf("same action block, different order and scheduling fields: %s != %s", ha, hb)
	}
}

func TestHashChangesWithActionBlock(t *testing.T) {
	dir := t.TempDir()
	base := mustHash(t, helmStep(map[string]any{"replicas": 1}), dir)
	if h := mustHash(t, helmStep(map[string]any{"replicas": 2}), dir); h == base {
		t.Error("a changed value did not change the hash")
	}
	// A rotated secret is just a different substituted value.
	withSecret := func(pw string) *spec.Step {
		st := helmStep(nil)
		st.Helm.Auth = &spec.Auth{Username: "u", Password: pw}
		return st
	}
	if mustHash(t, withSecret("old"), dir) == mustHash(t, withSecret("new"), dir) {
		t.Error("a rotated secret did not change the hash")
	}
	// Same fields under another action type are another input.
	w := &spec.Step{Name: "x", Wait: &spec.Wait{For: "delete", On: "pods"}}
	d := &spec.Step{Name: "x", Delete: &spec.Delete{Resource: "pods"}}
	if mustHash(t, w, dir) == mustHash(t, d, dir) {
		t.Error("wait and delete steps hash alike")
	}
}

func TestHashIncludesReferencedFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "values/a.yaml", "replicas: 1\n")
	st := helmStep(nil, "./values/a.yaml")
	before := mustHash(t, st, dir)
	if again := mustHash(t, st, dir); again != before {
		t.Fatalf("hash is not stable: %s then %s", before, again)
	}
	write(t, dir, "values/a.yaml", "replicas: 2\n")
	if after := mustHash(t, st, dir); after == before {
		t.Error("editing a values file did not change the hash")
	}
}

func TestHashKustomizeDirAndLocalChart(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "k/kustomization.yaml", "resources: [cm.yaml]\n")
	write(t, dir, "k/cm.yaml", "kind: ConfigMap\n")
	write(t, dir, "chart/Chart.yaml", "name: c\n")
	write(t, dir, "chart/templates/cm.yaml", "kind: ConfigMap\n")
	ap := &spec.Step{Name: "k", Apply: &spec.Apply{Manifests: []spec.Source{{Kustomize: "./k"}}}}
	hl := &spec.Step{Name: "c", Helm: &spec.Helm{Chart: "./chart", Release: "c", Namespace: "default"}}
	a1, c1 := mustHash(t, ap, dir), mustHash(t, hl, dir)

	write(t, dir, "k/cm.yaml", "kind: ConfigMap\nmetadata: {name: x}\n")
	write(t, dir, "chart/templates/new.yaml", "kind: Secret\n")
	if mustHash(t, ap, dir) == a1 {
		t.Error("editing a file of a kustomize directory did not change the hash")
	}
	if mustHash(t, hl, dir) == c1 {
		t.Error("adding a template to a local chart did not change the hash")
	}
}

// A base outside the kustomization's directory is an input too: editing
// it changes what the step applies, so a resumed run must not skip it.
func TestHashKustomizeBaseOutsideItsDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "base/kustomization.yaml", "resources: [cm.yaml]\n")
	write(t, dir, "base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v1}\n")
	write(t, dir, "overlay/kustomization.yaml", "resources: [../base]\nnamePrefix: prod-\n")
	write(t, dir, "unrelated/cm.yaml", "kind: ConfigMap\n")
	st := &spec.Step{Name: "k", Apply: &spec.Apply{Manifests: []spec.Source{{Kustomize: "./overlay"}}}}
	before := mustHash(t, st, dir)
	write(t, dir, "unrelated/cm.yaml", "kind: Secret\n")
	if mustHash(t, st, dir) != before {
		t.Error("a file the kustomization does not read changed the hash")
	}
	write(t, dir, "base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v2}\n")
	if mustHash(t, st, dir) == before {
		t.Error("editing the kustomization's base in ../base did not change the hash")
	}
}

func TestHashRemoteRefsByReferenceOnly(t *testing.T) {
	// No network: a url source and a repo chart hash without fetching anything.
	st := &spec.Step{Name: "u", Apply: &spec.Apply{Manifests: []spec.Source{{URL: "https://example.invalid/x.yaml"}}}}
	mustHash(t, st, t.TempDir())
	mustHash(t, helmStep(nil), t.TempDir())
}

func TestHashMissingFileIsAnActionableError(t *testing.T) {
	st := &spec.Step{Name: "m", Apply: &spec.Apply{Manifests: []spec.Source{{File: "./gone.yaml"}}}}
	_, err := Hash(st, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "step m") || !strings.Contains(err.Error(), "gone.yaml") {
		t.Fatalf("err = %v, want one naming the step and the file", err)
	}
	if _, err := Hash(&spec.Step{Name: "empty"}, ""); err == nil {
		t.Fatal("a step without an action block hashed")
	}
}

func TestSpecHashFollowsStepHashes(t *testing.T) {
	s := &spec.Spec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "x"},
		Steps: []*spec.Step{helmStep(nil)}}
	a, err := SpecHash(s, map[string]string{"demo": "sha256:1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SpecHash(s, map[string]string{"demo": "sha256:2"})
	if a == b {
		t.Error("a changed step hash (an edited file) did not change the spec hash")
	}
}

func TestEntryForRedactsAndTruncates(t *testing.T) {
	rd := redact.New()
	rd.Add("s3cr3t-value")
	long := "failed with s3cr3t-value: " + strings.Repeat("é", 2000)
	e := entryFor(model.StepResult{Name: "b", Status: model.StatusFailed, Attempts: 1, Error: long}, "h", rd, time.Unix(0, 0))
	if e.Status != StepFailed || strings.Contains(e.Error, "s3cr3t") || !strings.Contains(e.Error, redact.Mask) {
		t.Errorf("entry = %+v, want a failed entry with the secret masked", e)
	}
	if len(e.Error) > maxErrorBytes || !strings.HasSuffix(e.Error, "(truncated)") {
		t.Errorf("error is %d bytes, want at most %d and marked truncated", len(e.Error), maxErrorBytes)
	}
	for _, c := range []struct {
		res  model.StepResult
		want string
	}{
		{model.StepResult{Status: model.StatusOK, Attempts: 1}, StepOK},
		{model.StepResult{Status: model.StatusSkipped, Attempts: 1, SkipReason: "release exists"}, StepOK},
		{model.StepResult{Status: model.StatusSkipped, SkipReason: "needs a, which failed"}, StepSkipped},
	} {
		if got := entryFor(c.res, "h", rd, time.Now()).Status; got != c.want {
			t.Errorf("entryFor(%+v).Status = %s, want %s", c.res, got, c.want)
		}
	}
}

func TestRecordResumes(t *testing.T) {
	r := &Record{Steps: map[string]StepRecord{
		"a": {Hash: "h1", Status: StepOK},
		"b": {Hash: "h2", Status: StepFailed},
	}}
	cases := []struct {
		step, hash string
		want       bool
	}{{"a", "h1", true}, {"a", "h9", false}, {"b", "h2", false}, {"c", "h3", false}, {"a", "", false}}
	for _, c := range cases {
		if got := r.Resumes(c.step, c.hash); got != c.want {
			t.Errorf("Resumes(%s, %s) = %v, want %v", c.step, c.hash, got, c.want)
		}
	}
	var none *Record
	if none.Resumes("a", "h1") {
		t.Error("a nil record resumed a step")
	}
}

func TestRefForDefaults(t *testing.T) {
	s := &spec.Spec{Metadata: spec.Metadata{Name: "boot"}}
	if _, ok := RefFor(s); ok {
		t.Fatal("a spec without state: keeps a record")
	}
	s.State = &spec.State{Enabled: true}
	if ref, _ := RefFor(s); ref != (Ref{Namespace: "default", Name: "khook-state-boot"}) {
		t.Errorf("RefFor = %v, want default/khook-state-boot", ref)
	}
	s.State.Enabled = false
	if _, ok := RefFor(s); ok {
		t.Fatal("state.enabled=false keeps a record")
	}
}

// BenchmarkHashKustomizeDir hashes an apply step over a 200-file directory,
// the costliest input a step can reference.
func BenchmarkHashKustomizeDir(b *testing.B) {
	dir := b.TempDir()
	for i := range 200 {
		p := filepath.Join(dir, "k", fmt.Sprintf("obj-%03d.yaml", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("key: value\n", 50)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	st := &spec.Step{Name: "k", Apply: &spec.Apply{Manifests: []spec.Source{{Kustomize: "./k"}}}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Hash(st, dir); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHashesSkipExcludedAndUnhashableSteps(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ok.yaml", "kind: ConfigMap\n")
	s := &spec.Spec{BaseDir: dir, Steps: []*spec.Step{
		{Name: "ok", Apply: &spec.Apply{Manifests: []spec.Source{{File: "./ok.yaml"}}}},
		{Name: "missing", Apply: &spec.Apply{Manifests: []spec.Source{{File: "./gone.yaml"}}}},
		{Name: "prod-only", Skip: spec.SkipWhen, Apply: &spec.Apply{Manifests: []spec.Source{{File: "./prod.yaml"}}}},
	}}
	h := Hashes(s)
	if h["ok"] == "" || len(h) != 1 {
		t.Fatalf("Hashes = %v, want only ok hashed", h)
	}
	rec := &Record{Steps: map[string]StepRecord{"missing": {Status: StepOK}}}
	if rec.Resumes("missing", h["missing"]) {
		t.Error("a step without a hash resumed")
	}
}
