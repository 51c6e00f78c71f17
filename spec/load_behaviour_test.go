package spec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const minimal = "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: m}\nsteps:\n  - name: a\n    wait: {for: delete, on: pods/x}\n"

func TestLoadStdin(t *testing.T) {
	s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(minimal)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Files[0] != StdinName || s.BaseDir == "" || s.PosOf("steps.0.wait.on").String() != StdinName+":6:29" {
		t.Errorf("files %v, basedir %q, pos %s", s.Files, s.BaseDir, s.PosOf("steps.0.wait.on"))
	}
	if _, err := Load(LoadOptions{Files: []string{"-"}}); err == nil {
		t.Error("want an error without stdin")
	}
}

func TestLoadRefusals(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), MaxFileSize/10+1), 0o644)
	for name, opts := range map[string]LoadOptions{
		"no file":         {},
		"overlay missing": {Files: []string{"a.yaml", "b.yaml"}},
		"missing":         {Files: []string{filepath.Join(dir, "nope.yaml")}},
		"dir":             {Files: []string{dir}},
		"too big":         {Files: []string{big}},
	} {
		_, err := Load(opts)
		var probs Problems
		if err == nil || errors.As(err, &probs) {
			t.Errorf("%s: want a plain error, got %v", name, err)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	os.WriteFile(empty, []byte("# nothing\n"), 0o644)
	if _, err := Load(LoadOptions{Files: []string{empty}}); err == nil || !strings.Contains(err.Error(), "the spec is empty") {
		t.Errorf("empty: %v", err)
	}
}

// An alias bomb fails fast and small: the node budget stops it before any
// expansion is materialised.
func TestAliasBombBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Load(LoadOptions{Files: []string{"testdata/invalid-alias-bomb.yaml"}})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "YAML nodes") {
		t.Fatalf("want the node budget error, got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB loading an alias bomb, want < 64", alloc>>20)
	}
	cyclic := "a: &a [*a]\n"
	if _, err := Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(cyclic)}); err == nil {
		t.Error("want an error for a self-referencing alias")
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	s, err := loadTestdata(t, "testdata/valid-anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	two := s.Steps[1].Helm
	if two.Chart != "cilium" || two.Namespace != "kube-system" || two.Release != "cilium-two" || two.Values["hubble"] == nil {
		t.Errorf("merged helm: %+v", two)
	}
	w := s.Steps[2].Wait
	if w.For != "condition=Available" || w.Namespace != "kube-system" {
		t.Errorf("merged wait: %+v", w)
	}
}

func TestDefaultsApplied(t *testing.T) {
	s, err := loadTestdata(t, "testdata/valid-all-types.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type eff struct {
		Timeout, RetryDelay string
		Retries             int
		OnError             string
	}
	var got []eff
	for _, st := range s.Steps {
		got = append(got, eff{st.Timeout.String(), st.RetryDelay.String(), st.Retries, st.OnError})
	}
	want := []eff{
		{"10m0s", "10s", 1, "fail"}, {"15m0s", "10s", 1, "fail"}, {"10m0s", "10s", 1, "fail"}, {"10m0s", "10s", 1, "fail"},
		{"10m0s", "10s", 1, "fail"}, {"10m0s", "10s", 1, "fail"}, {"10m0s", "10s", 3, "fail"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective scheduling (-want +got):\n%s", diff)
	}
	h := s.Step("cilium").Helm
	if h.Chart != "cilium" || h.Version != "1.18.4" || h.Release != "cilium" {
		t.Errorf("helm normalisation: chart %q version %q release %q", h.Chart, h.Version, h.Release)
	}
	if s.State == nil || !s.State.Enabled || s.State.Namespace != "default" || s.State.Name != "khook-state-all-types" {
		t.Errorf("state defaults: %+v", s.State)
	}
	if s.Step("patch-aws-node").Patch.Type != PatchJSON || s.Step("smoke").Job.Namespace != "default" {
		t.Error("per-type defaults not applied")
	}
	if !s.Step("restart-agent").Excluded() || s.Step("smoke").Excluded() {
		t.Error("when: not evaluated")
	}
	if d := s.Step("remove-aws-node").Delete; !d.IgnoresNotFound() {
		t.Error("ignoreNotFound defaults to true")
	}

	// Built-ins without defaults:, and state: enabled false.
	s, err = Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(minimal + "state: {enabled: false, name: rec}\n")})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Steps[0]
	if st.Timeout.D() != DefaultTimeout || st.RetryDelay.D() != DefaultRetryDelay || st.Retries != 0 || st.OnError != OnErrorFail {
		t.Errorf("built-in defaults: %+v", st)
	}
	if s.State.Enabled || s.State.Name != "rec" {
		t.Errorf("state: %+v", s.State)
	}
}

func TestPositionsOfValues(t *testing.T) {
	s, err := loadTestdata(t, "testdata/valid-all-types.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"metadata.name":                      "4:9",
		"steps.1":                            "15:5",
		"steps.1.helm":                       "18:5",
		"steps.1.helm.chart":                 "19:14",
		"steps.1.helm.values.hubble.enabled": "25:20",
		"steps.1.helm.values.hubble.relay":   "26:11",
		"steps.3.patch.patch.0.path":         "45:17",
		"steps.6.job.command.1":              "64:23",
	} {
		if got := s.PosOf(path); got.String() != "testdata/valid-all-types.yaml:"+want {
			t.Errorf("%s at %s, want %s", path, got, want)
		}
	}
}

// Documents far over the node budget are refused before the parser builds
// them, in little memory.
func TestHugeDocumentsRefusedCheaply(t *testing.T) {
	for name, doc := range map[string][]byte{
		"flow list":  append([]byte("a: ["), bytes.Repeat([]byte("a,"), 1_500_000)...),
		"block list": append([]byte("a:\n"), bytes.Repeat([]byte("- a\n"), 900_000)...),
		"nesting":    append([]byte("a: "), bytes.Repeat([]byte("["), 1_000_000)...),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(doc)})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("%s: want a too-large error, got %.200v", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s: allocated %d MiB, want < 64", name, alloc>>20)
		}
	}
	// A big but ordinary spec is far below the estimate's limit.
	if est := estimateNodes(bigSpec(1000)); est > maxEstimatedNodes/4 {
		t.Errorf("a 1,000-step spec is estimated at %d nodes", est)
	}
}

// Overlays (issue 7) will graft nodes from other files into the base tree;
// positions must keep the file each node came from.
func TestGraftedNodesKeepTheirFile(t *testing.T) {
	vs := &varSet{vals: map[string]string{}, secret: map[string]bool{}}
	base, probs := parseFile("base.yaml", []byte(minimal), vs, newPipelines())
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	overlay, probs := parseFile("overlay.yaml", []byte("steps:\n  - name: b\n    needs: [a]\n    wait: {for: delete, on: pods/y}\n"), vs, newPipelines())
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	step := overlay.root.Content[1].Content[0] // steps[0] of the overlay
	steps := base.root.Content[7]              // the base's steps list
	steps.Content = append(steps.Content, step)
	base.graft(overlay, step)
	s, probs := build(base, vs, nil)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for path, want := range map[string]string{
		"steps.0.wait.on": "base.yaml:6:29",
		"steps.1":         "overlay.yaml:2:5",
		"steps.1.wait.on": "overlay.yaml:4:29",
	} {
		if got := s.PosOf(path).String(); got != want {
			t.Errorf("%s at %s, want %s", path, got, want)
		}
	}
}

func TestEdgeCasesNormalised(t *testing.T) {
	s, err := loadTestdata(t, "testdata/valid-edge-cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	digest := "@sha256:" + strings.Repeat("0", 64)
	type got struct{ Chart, Version string }
	for name, want := range map[string]got{
		"oci-with-port":         {"oci://localhost:5000/charts/app", "0.1.0"},
		"oci-tag-and-digest":    {"oci://ghcr.io/org/app" + digest, "1.0.0"},
		"repo-with-credentials": {"app", "1.10"},
		"parent-dir-chart":      {"../charts/app", ""},
	} {
		h := s.Step(name).Helm
		if diff := cmp.Diff(want, got{h.Chart, h.Version}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(map[string]EnvValue{"PORT": {Value: "8080"}, "DEBUG": {Value: "true"}, "EMPTY": {}}, s.Step("env-scalars").Job.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if s.Step("oci-with-port").Excluded() || s.Step("delete-false").Delete.IgnoresNotFound() || s.State.Enabled {
		t.Error("when: true, ignoreNotFound: false or state.enabled: false not honoured")
	}
	if st := s.Step("ops"); st.OnError != OnErrorContinue || st.RetryDelay.D().String() != "1.5s" {
		t.Errorf("defaults: %s %s", st.OnError, st.RetryDelay)
	}
}
