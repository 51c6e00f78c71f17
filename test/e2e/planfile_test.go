package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/e2e/apiproxy"
)

// Hostile secret values: multi-line, regex metacharacters, one a substring
// of the other.
const (
	hostileToken = "line one: Sup3r$ecret.*[a-z]+(x)\nsecond line ^$|\\d{2} \"quoted\""
	hostileOther = "Sup3r$ecret.*"
	planKey      = "e2e-plan-key-0123456789abcdef"
)

// reviewed runs khook against one counting proxy (plan and apply must see
// the same API server URL: it is part of the cluster's identity).
type reviewed struct {
	t     *testing.T
	ns    string
	dir   string
	proxy *apiproxy.Proxy
	env   []string
	spec  string // "" is testdata/planfile.yaml
}

func newReviewed(t *testing.T) *reviewed {
	return &reviewed{t: t, ns: namespace(t), dir: t.TempDir(), proxy: apiproxy.Start(t, kc.RESTConfig),
		env: []string{"KHOOK_SECRET_TOKEN=" + hostileToken, "KHOOK_SECRET_OTHER=" + hostileOther, "KHOOK_PLAN_KEY=" + planKey}}
}

func (r *reviewed) run(args ...string) outcome {
	r.t.Helper()
	return khook(r.t, invocation{Args: args, Env: r.env, Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
}

// plan saves a plan of the spec with sets to the file name.
func (r *reviewed) plan(name string, sets ...string) {
	r.t.Helper()
	args := []string{"plan", "-f", testdata("planfile.yaml"), "--out", name, "--set", "NS=" + r.ns}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if out := r.run(args...); out.Code != 0 {
		r.t.Fatalf("plan --out: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
}

// apply runs apply --plan and returns its outcome and the writes it sent.
func (r *reviewed) apply(name string, sets ...string) (outcome, []string) {
	r.t.Helper()
	r.proxy.Writes() // drains what came before
	spec := r.spec
	if spec == "" {
		spec = testdata("planfile.yaml")
	}
	args := []string{"apply", "-f", spec, "--plan", name, "-o", "json", "--set", "NS=" + r.ns}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out := r.run(args...)
	writes, _ := r.proxy.Writes()
	return out, writes
}

// plan --out, then apply --plan on the unchanged world applies what the
// plan showed; after an out-of-band edit or a changed --set, apply --plan
// exits 1 with plan-changed, names the step, and writes nothing.
func TestApplyPlanFile(t *testing.T) {
	r := newReviewed(t)
	r.plan("fresh.plan")
	out, writes := r.apply("fresh.plan")
	if out.Code != 0 || out.Results.Status != model.RunOK {
		t.Fatalf("apply --plan on the unchanged world: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	expectSteps(t, out, []want{{Name: "config", Status: ok, Attempts: 1}, {Name: "credentials", Status: ok, Attempts: 1}, {Name: "ready", Status: ok, Attempts: 1}})
	t.Logf("apply --plan of a fresh namespace: %d writes", len(writes))

	// An out-of-band edit between plan and apply.
	r.plan("converged.plan")
	ctx := context.Background()
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	cm.Data["msg"] = "edited by hand"
	cm, err = kc.Client.CoreV1().ConfigMaps(r.ns).Update(ctx, cm, metav1.UpdateOptions{})
	must(t, err)
	out, writes = r.apply("converged.plan")
	refused(t, out, writes, "step config: planned unchanged, now would configure")
	now, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	if now.ResourceVersion != cm.ResourceVersion || now.Data["msg"] != "edited by hand" {
		t.Errorf("the refused apply touched the edited ConfigMap: %v", now.Data)
	}

	// A changed --set value.
	r.plan("msg.plan")
	out, writes = r.apply("msg.plan", "MSG=two")
	refused(t, out, writes, "input MSG has another value than when planned")

	// A spec changed after the plan: a step added.
	r.plan("spec.plan")
	src, err := os.ReadFile(testdata("planfile.yaml"))
	must(t, err)
	r.spec = filepath.Join(r.dir, "edited.yaml")
	must(t, os.WriteFile(r.spec, append(src, []byte(`  - name: extra
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: extra}
`)...), 0o644))
	out, writes = r.apply("spec.plan")
	refused(t, out, writes, "the spec changed")
	refused(t, out, writes, "step extra: not in the plan, now would create")
	r.spec = ""

	// Another cluster: the plan's API server is not this run's. (One harness
	// cluster here: a second endpoint stands in for it; the kube-system UID
	// comparison is held by runner/command's tests.)
	r.plan("cluster.plan")
	first := r.proxy
	r.proxy = apiproxy.Start(t, kc.RESTConfig)
	out, writes = r.apply("cluster.plan")
	refused(t, out, writes, "the plan was made for cluster "+first.URL)
	if w, _ := first.Writes(); len(w) != 0 {
		t.Errorf("the refused apply wrote through the plan's endpoint: %q", w)
	}
}

func refused(t *testing.T, out outcome, writes []string, says string) {
	t.Helper()
	if out.Code != 1 || out.Results == nil || out.Results.FailureReason != model.ReasonPlanChanged {
		t.Fatalf("apply --plan of a changed world: exit %d, results %+v; want exit 1, %s\nstderr:\n%s", out.Code, out.Results, model.ReasonPlanChanged, out.Stderr)
	}
	if !strings.Contains(out.Results.Error, says) {
		t.Errorf("the refusal does not say %q:\n%s", says, out.Results.Error)
	}
	if len(writes) != 0 || len(out.Results.Steps) != 0 {
		t.Errorf("a refused apply wrote %q and ran %d steps", writes, len(out.Results.Steps))
	}
	t.Logf("refused, %d writes: %s", len(writes), out.Results.Error)
}

// A plan file made with hostile secrets holds none of them in any form,
// and show renders it (text, JSON, Markdown) with no kubeconfig at all.
func TestPlanFileHoldsNoSecret(t *testing.T) {
	r := newReviewed(t)
	// With --diff, so the Secret's diff is in the file too (masked).
	if out := r.run("plan", "-f", testdata("planfile.yaml"), "--diff", "--out", "hostile.plan", "--set", "NS="+r.ns); out.Code != 0 {
		t.Fatalf("plan --diff --out: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "hostile.plan"))
	must(t, err)
	var doc struct {
		Format string `json:"format"`
		Plan   struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"plan"`
	}
	must(t, json.Unmarshal(data, &doc))
	if doc.Format != "khook.io/plan/v1" || len(doc.Plan.Fingerprint) != 64 {
		t.Fatalf("not a plan file:\n%s", data)
	}
	// The secrets are in the plan, as keyed digests: the test is only worth
	// something if the file covers them.
	for _, in := range []string{`"name": "TOKEN",
          "secret": true,
          "digest": "hmac-sha256:`, `"kind": "Secret"`, `"diff": "`} {
		if !strings.Contains(string(data), in) {
			t.Errorf("the plan file does not hold %s:\n%s", in, data)
		}
	}
	texts := map[string]string{"plan file": string(data)}
	for _, o := range []string{"text", "json", "markdown"} {
		out := khook(t, invocation{Args: []string{"show", "hostile.plan", "-o", o}, Dir: r.dir, Kubeconfig: filepath.Join(r.dir, "no-such-kubeconfig")})
		if out.Code != 0 || !strings.Contains(out.Stdout, doc.Plan.Fingerprint[:12]) {
			t.Errorf("show -o %s without a kubeconfig: exit %d, no fingerprint\nstdout:\n%s\nstderr:\n%s", o, out.Code, out.Stdout, out.Stderr)
		}
		texts["show -o "+o] = out.Stdout + out.Stderr
		if o == "text" {
			t.Logf("khook show:\n%s", out.Stdout)
		}
	}
	for _, secret := range []string{hostileToken, hostileOther, planKey} {
		for _, form := range secretForms(secret) {
			for name, text := range texts {
				if strings.Contains(text, form) {
					t.Errorf("%s holds the secret %q as %q", name, secret, form)
				}
			}
		}
	}
}

// secretForms are the ways a secret can show: raw, each line, JSON-escaped
// and base64.
func secretForms(s string) []string {
	js, _ := json.Marshal(s)
	forms := []string{s, string(js[1 : len(js)-1]), base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s))}
	for _, line := range strings.Split(s, "\n") {
		if len(line) >= 4 {
			forms = append(forms, line)
		}
	}
	return forms
}

// Without KHOOK_PLAN_KEY the plan file still holds no secret (and no digest
// of one: plan --out warns), and applying it with a key is refused with a
// sentence about the key, not about the world.
func TestPlanFileWithoutKey(t *testing.T) {
	r := newReviewed(t)
	keyless := r.env[:2]
	out := khook(t, invocation{Args: []string{"plan", "-f", testdata("planfile.yaml"), "--out", "keyless.plan", "--set", "NS=" + r.ns},
		Env: keyless, Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
	if out.Code != 0 || !strings.Contains(out.Stderr, "KHOOK_PLAN_KEY is not set: the plan's digests are unkeyed") {
		t.Fatalf("plan --out without a key: exit %d, no warning\nstderr:\n%s", out.Code, out.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "keyless.plan"))
	must(t, err)
	for _, form := range append(secretForms(hostileToken), secretForms(hostileOther)...) {
		if strings.Contains(string(data), form) {
			t.Errorf("the keyless plan file holds %q", form)
		}
	}
	if strings.Contains(string(data), "hmac-sha256:") || !strings.Contains(string(data), `"keyed": false`) {
		t.Errorf("the keyless plan file has keyed digests")
	}
	applied, writes := r.apply("keyless.plan")
	refused(t, applied, writes, "the plan was made without the plan key (KHOOK_PLAN_KEY) and this run has it")
}
