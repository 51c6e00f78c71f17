package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
)

// signedRepo is the demo chart packaged, signed with signer (nil: no
// .prov) and served over HTTP; alter re-packages other bytes under the same
// version after signing, keeping the old .prov.
func signedRepo(t *testing.T, signer *chartsrc.Signer, alter bool) *chartsrc.HTTPRepo {
	t.Helper()
	dir := t.TempDir()
	tgz := chartsrc.Package(t, "demo", dir)
	if signer != nil {
		signer.Sign(t, tgz)
	}
	if alter {
		writeAltered(t, tgz)
	}
	return chartsrc.ServeDir(t, chartsrc.Auth{}, dir)
}

// writeAltered overwrites tgz with the altered demo chart, same name and
// version, other bytes.
func writeAltered(t *testing.T, tgz string) {
	t.Helper()
	ch, err := loader.Load(alteredDemo(t))
	must(t, err)
	saved, err := chartutil.Save(ch, t.TempDir())
	must(t, err)
	data, err := os.ReadFile(saved)
	must(t, err)
	must(t, os.WriteFile(tgz, data, 0o644))
}

// alteredDemo is a copy of the demo chart with other default values.
func alteredDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	src := chartsrc.ChartDir("demo")
	must(t, filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "values.yaml" {
			data = append(data, []byte("\n# altered after signing\nextra: true\n")...)
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	}))
	return dir
}

// releasesIn counts Helm's release records in ns: none means nothing was
// installed.
func releasesIn(t *testing.T, ns string) int {
	t.Helper()
	list, err := kc.Client.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
	must(t, err)
	return len(list.Items)
}

func verifySpec(t *testing.T, ns, chart, keyring string) string {
	return chartSpec(t, ns, chart+"    verify:\n      provenance: {keyring: "+keyring+"}\n")
}

// A chart signed as helm package --sign does, served over HTTP with its
// .prov: the plan names the signer and the chart's sha256, apply installs.
func TestProvenanceHTTPSigned(t *testing.T) {
	ns := namespace(t)
	signer := chartsrc.NewSigner(t, "Chart Signer")
	repo := signedRepo(t, signer, false)
	file := verifySpec(t, ns, "    chart: demo\n    repo: "+repo.URL+"\n    version: 0.1.0\n", signer.PublicRing)

	p := planJSON(t, nil, file)
	st := p.Steps[0]
	digest := chartsrc.FileDigest(t, filepath.Join(repo.Dir(), "demo-0.1.0.tgz"))
	if st.Action != model.ActionInstall || !strings.Contains(st.Reason, "; chart "+digest+"; verified: signed by Chart Signer (test) <signer@example.com> (key "+signer.Fingerprint+")") {
		t.Errorf("plan: %s %q", st.Action, st.Reason)
	}
	if st.Release == nil || st.Release.Archive != digest {
		t.Errorf("plan JSON release = %+v, want archive %s", st.Release, digest)
	}
	text := khook(t, invocation{Args: []string{"plan", "-f", file}})
	if !strings.Contains(text.Stdout, digest) || !strings.Contains(text.Stdout, "signed by Chart Signer") {
		t.Errorf("the plan text names neither the digest nor the signer:\n%s", text.Stdout)
	}
	out := applySpec(t, file)
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if n := releasesIn(t, ns); n != 1 {
		t.Errorf("%d release records after apply, want 1", n)
	}
}

// Unsigned, altered after signing, signed by another key: the step plans
// fail with one sentence (exit 1) and apply installs nothing.
func TestProvenanceRefused(t *testing.T) {
	signer := chartsrc.NewSigner(t, "Chart Signer")
	other := chartsrc.NewSigner(t, "Someone Else")
	for _, c := range []struct {
		name    string
		repo    *chartsrc.HTTPRepo
		keyring string
		found   string
	}{
		{"unsigned", signedRepo(t, nil, false), signer.PublicRing, "there is none at "},
		{"altered", signedRepo(t, signer, true), signer.PublicRing, "the chart was altered after signing"},
		{"other key", signedRepo(t, other, false), signer.PublicRing, "is signed by key " + other.Fingerprint + ", which is not in the keyring"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := namespace(t)
			file := verifySpec(t, ns, "    chart: demo\n    repo: "+c.repo.URL+"\n    version: 0.1.0\n", c.keyring)
			out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
			var p model.Plan
			must(t, json.Unmarshal([]byte(out.Stdout), &p))
			sentence := "chart demo 0.1.0 from " + c.repo.URL + ": verify.provenance requires a .prov signed by a key in " + c.keyring + ", and "
			if r := p.Steps[0].Reason; out.Code != 1 || p.Steps[0].Action != model.ActionFail || !strings.Contains(r, sentence) || !strings.Contains(r, c.found) {
				t.Errorf("plan: exit %d, %s %q\nwant %q ... %q", out.Code, p.Steps[0].Action, r, sentence, c.found)
			}
			ap := applySpec(t, file)
			expectSteps(t, ap, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: sentence}})
			if ap.Code != 1 {
				t.Errorf("apply exit %d, want 1", ap.Code)
			}
			if n := releasesIn(t, ns); n != 0 {
				t.Errorf("apply installed %d release records of a refused chart", n)
			}
		})
	}
}

// The same version re-published with other bytes (and signed again, so
// only the bytes differ) between plan --out and apply --plan: apply
// refuses with plan-changed, naming both digests, and writes nothing.
func TestChartRepublishedAfterPlan(t *testing.T) {
	ns := namespace(t)
	signer := chartsrc.NewSigner(t, "Chart Signer")
	repo := signedRepo(t, signer, false)
	file := verifySpec(t, ns, "    chart: demo\n    repo: "+repo.URL+"\n    version: 0.1.0\n", signer.PublicRing)
	dir := t.TempDir()
	if out := khook(t, invocation{Args: []string{"plan", "-f", file, "--out", "reviewed.plan"}, Dir: dir}); out.Code != 0 {
		t.Fatalf("plan --out: exit %d\n%s", out.Code, out.Stderr)
	}
	tgz := filepath.Join(repo.Dir(), "demo-0.1.0.tgz")
	before := chartsrc.FileDigest(t, tgz)
	writeAltered(t, tgz)
	signer.Sign(t, tgz)
	repo.Reindex(t)
	after := chartsrc.FileDigest(t, tgz)

	out := khook(t, invocation{Args: []string{"apply", "-f", file, "--plan", "reviewed.plan", "-o", "json"}, Dir: dir})
	refused(t, out, nil, "step app: the chart's bytes differ from the plan's (planned "+before+", now "+after+")")
	if n := releasesIn(t, ns); n != 0 {
		t.Errorf("the refused apply installed %d release records", n)
	}
}

// --require-verified-charts: a remote chart without verify: is refused at
// its line (exit 2); with verify: the spec validates. A keyring that is not
// one is refused at its line too.
func TestRequireVerifiedCharts(t *testing.T) {
	ns := namespace(t)
	signer := chartsrc.NewSigner(t, "Chart Signer")
	repo := signedRepo(t, signer, false)
	chart := "    chart: demo\n    repo: " + repo.URL + "\n    version: 0.1.0\n"
	bare := chartSpec(t, ns, chart)
	out := khook(t, invocation{Args: []string{"validate", "-f", bare, "--require-verified-charts"}})
	if want := bare + ":8:12: steps.0.helm.chart: step app installs demo unverified"; out.Code != 2 || !strings.Contains(out.Stderr, want) {
		t.Errorf("validate --require-verified-charts: exit %d, want 2 and %q\n%s", out.Code, want, out.Stderr)
	}
	if out := khook(t, invocation{Args: []string{"validate", "-f", verifySpec(t, ns, chart, signer.PublicRing), "--require-verified-charts"}}); out.Code != 0 {
		t.Errorf("a verified spec: exit %d\n%s", out.Code, out.Stderr)
	}
	notRing := filepath.Join(t.TempDir(), "ring.gpg")
	must(t, os.WriteFile(notRing, []byte("not a keyring\n"), 0o644))
	bad := verifySpec(t, ns, chart, notRing)
	out = khook(t, invocation{Args: []string{"plan", "-f", bad}})
	if want := bad + ":12:29: steps.0.helm.verify.provenance.keyring: " + notRing + " is not an OpenPGP keyring"; out.Code != 2 || !strings.Contains(out.Stderr, want) {
		t.Errorf("a keyring that is not one: exit %d, want 2 and %q\n%s", out.Code, want, out.Stderr)
	}
}

// A signed chart pushed to the OCI registry with its .prov layer: the plan
// names the signer and the manifest digest, apply installs; pushed without
// the layer, it plans fail.
func TestProvenanceOCI(t *testing.T) {
	signer := chartsrc.NewSigner(t, "Chart Signer")
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	tgz := chartsrc.Package(t, "demo", t.TempDir())
	ref := reg.PushSigned(t, tgz, signer.Sign(t, tgz))
	ns := namespace(t)
	file := verifySpec(t, ns, "    chart: "+ref+":0.1.0\n", signer.PublicRing)
	st := planJSON(t, nil, file).Steps[0]
	if st.Action != model.ActionInstall || !strings.Contains(st.Reason, "verified: signed by Chart Signer (test) <signer@example.com> (key "+signer.Fingerprint+")") ||
		st.Release == nil || !strings.HasPrefix(st.Release.Archive, "sha256:") || !strings.Contains(st.Reason, "; chart "+st.Release.Archive) {
		t.Errorf("plan: %s %q release %+v", st.Action, st.Reason, st.Release)
	}
	expectSteps(t, applySpec(t, file), []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})

	unsigned := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	ns = namespace(t)
	file = verifySpec(t, ns, "    chart: "+unsigned.Push(t, "demo")+":0.1.0\n", signer.PublicRing)
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
	if out.Code != 1 || !strings.Contains(out.Stdout, "there is none at the manifest sha256:") {
		t.Errorf("unsigned OCI chart: exit %d\n%s", out.Code, out.Stdout)
	}
}
