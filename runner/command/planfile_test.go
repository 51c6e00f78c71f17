package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/spec"
)

// A spec with a state record (apply --plan checks under its lock), a
// chart, a manifest, a patch, a wait and a step when: leaves out.
const reviewedSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: reviewed
state: {namespace: %[1]s}
vars:
  MSG: {type: string, default: one}
  TOKEN: {type: string, secret: true}
steps:
  - name: release
    helm:
      chart: %[2]s
      namespace: %[1]s
      values:
        message: ${MSG}
        replicaCount: 1
  - name: config
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              msg: "${MSG}"
  - name: tweak
    needs: [config]
    patch:
      target: configmap/settings
      namespace: %[1]s
      type: merge
      patch:
        metadata:
          labels:
            tweaked: "yes"
  - name: ready
    needs: [config]
    wait:
      for: jsonpath={.data.msg}=${MSG}
      on: configmap/settings
      namespace: %[1]s
  - name: prod-only
    when: vars.MSG == "prod"
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: prod
%[3]s`

type reviewWorld struct {
	t    *testing.T
	ns   string
	file string
	cfg  *Configuration
	env  []string // the environment specs load with (secret inputs)
}

func newReviewWorld(t *testing.T, extra string) *reviewWorld {
	t.Helper()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	w := &reviewWorld{t: t, ns: testCluster.Namespace(t), file: filepath.Join(t.TempDir(), "khook.yaml"),
		cfg: &Configuration{Clients: clients, PlanKey: []byte("test-plan-key")}}
	w.write(extra)
	return w
}

func (w *reviewWorld) write(extra string) {
	chart, _ := filepath.Abs("../../test/testdata/charts/demo")
	if err := os.WriteFile(w.file, []byte(fmt.Sprintf(reviewedSpec, w.ns, chart, extra)), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *reviewWorld) load(set ...string) *spec.Spec {
	s, err := spec.Load(spec.LoadOptions{Files: []string{w.file}, Set: set, Environ: w.env})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// plan plans and saves, returning the plan file as apply --plan reads it.
func (w *reviewWorld) plan(ctx context.Context, set ...string) *planfile.File {
	w.t.Helper()
	p, err := (&PlanCommand{Config: w.cfg}).Run(ctx, w.load(set...))
	if err != nil {
		w.t.Fatal(err)
	}
	data, err := planfile.Marshal(planfile.New(p, "test", time.Now()))
	if err != nil {
		w.t.Fatal(err)
	}
	f, err := planfile.Read(strings.NewReader(string(data)))
	if err != nil {
		w.t.Fatal(err)
	}
	return f
}

func (w *reviewWorld) apply(ctx context.Context, f *planfile.File, set ...string) (*model.Results, error) {
	return (&ApplyCommand{Config: w.cfg, Expect: f}).Run(ctx, w.load(set...))
}

// settingsVersion is the ConfigMap's resourceVersion: unchanged, nothing
// wrote it.
func (w *reviewWorld) settingsVersion(ctx context.Context) string {
	cm, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return cm.ResourceVersion
}

// Plan, then apply --plan on the unchanged world: it applies, step for step
// what the plan said; a second plan of the converged world has one
// fingerprint however often it is made.
func TestApplyReviewedPlanOnUnchangedWorld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newReviewWorld(t, "")
	f := w.plan(ctx)
	res, err := w.apply(ctx, f)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("apply --plan on the unchanged world: %v %+v", err, res)
	}
	got := map[string]model.StepResult{}
	for _, r := range res.Steps {
		got[r.Name] = r
	}
	for _, ps := range f.Plan.Steps {
		want := ps.Action
		switch want {
		case model.ActionUnknown:
			continue // its target comes with an earlier step
		case model.ActionWait:
			want = model.ActionNoop
		case model.ActionExcluded:
			if !got[ps.Name].Skip.Excluded() {
				t.Errorf("step %s was planned excluded and ran", ps.Name)
			}
			continue
		}
		if v := verdict(got[ps.Name]); v != want {
			t.Errorf("step %s: planned %s, apply did %s", ps.Name, ps.Action, v)
		}
	}
	// Converged: plans of the same world share their fingerprint.
	a, b := w.plan(ctx), w.plan(ctx)
	if a.Plan.Fingerprint != b.Plan.Fingerprint {
		t.Errorf("two plans of the converged world: fingerprints %s and %s; changes: %q", a.Plan.Fingerprint, b.Plan.Fingerprint, a.Changes(b.Plan))
	}
	if d := a.Plan.Digests; d.ClusterUID == "" || d.Spec == "" || !d.Keyed {
		t.Errorf("the plan's digests are incomplete: %+v", d)
	}
	res, err = w.apply(ctx, a)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("apply --plan on the converged world: %v %+v", err, res)
	}
}

// Between plan and apply --plan, the world changes: an out-of-band edit, a
// changed --set value, an edited spec, another cluster. Each is refused
// before any write with plan-changed and a sentence naming the step and
// the difference.
func TestApplyReviewedPlanRefusesAChangedWorld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newReviewWorld(t, "")
	if res, err := (&ApplyCommand{Config: w.cfg}).Run(ctx, w.load()); err != nil || res.Status != model.RunOK {
		t.Fatalf("first apply: %v %+v", err, res)
	}
	for _, tc := range []struct {
		name   string
		change func() []string // changes the world, returns the apply's --set
		want   string
	}{
		{"out-of-band edit", func() []string {
			cm, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["msg"] = "edited by hand"
			if _, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			return nil
		}, "step config: planned unchanged ConfigMap " + "%s/settings against live digest hmac-sha256:"},
		{"changed --set", func() []string { return []string{"MSG=two"} }, "input MSG has another value than when planned"},
		{"changed secret", func() []string {
			w.env = []string{"KHOOK_SECRET_TOKEN=a.*[b]$\nsecond line"}
			return nil
		}, "secret input TOKEN has another value than when planned"},
		{"edited spec", func() []string {
			w.write("  - name: added\n    job: {image: busybox, namespace: " + w.ns + "}\n")
			return nil
		}, "step added: not in the plan, now would run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.write("")
			w.env = []string{"KHOOK_SECRET_TOKEN=first"}
			f := w.plan(ctx)
			set := tc.change()
			before := w.settingsVersion(ctx)
			res, err := w.apply(ctx, f, set...)
			var changed *planfile.ChangedError
			if !errors.As(err, &changed) || res.FailureReason != model.ReasonPlanChanged || res.Status != model.RunFailed {
				t.Fatalf("apply --plan after %s: err %v, results %+v; want a refusal with %s", tc.name, err, res, model.ReasonPlanChanged)
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, w.ns)
			}
			if !strings.Contains(res.Error, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, res.Error)
			}
			if len(res.Steps) != 0 || w.settingsVersion(ctx) != before {
				t.Errorf("a refused apply ran steps or wrote: %d steps", len(res.Steps))
			}
			t.Logf("refused: %s", res.Error)
		})
	}
	// Another cluster: one harness has one kube-system, so the reviewed
	// plan is made to name another.
	w.write("")
	f := w.plan(ctx)
	f.Plan.Digests.ClusterUID = "0000-another-cluster"
	res, err := w.apply(ctx, f)
	if !errors.As(err, new(*planfile.ChangedError)) || !strings.Contains(res.Error, "(kube-system UID 0000-another-cluster); this is") {
		t.Errorf("apply --plan of another cluster's plan: %v", err)
	}
}

// A reviewed change is applied, not resumed past: the state record would
// skip the step (it succeeded with the same inputs), but the plan shows the
// drifted ConfigMap being configured, and that is what was approved.
func TestApplyReviewedPlanDoesNotResumePastAChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newReviewWorld(t, "")
	if res, err := (&ApplyCommand{Config: w.cfg}).Run(ctx, w.load()); err != nil || res.Status != model.RunOK {
		t.Fatalf("first apply: %v %+v", err, res)
	}
	cm, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["msg"] = "edited by hand"
	if _, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f := w.plan(ctx)
	res, err := w.apply(ctx, f)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("apply --plan: %v %+v", err, res)
	}
	for _, r := range res.Steps {
		if r.Name == "config" && verdict(r) != model.ActionConfigure {
			t.Errorf("step config: planned configure, apply did %s (%s)", verdict(r), r.SkipReason)
		}
	}
	now, err := testCluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || now.Data["msg"] != "one" {
		t.Errorf("the drifted ConfigMap was not repaired: %v %v", now.Data, err)
	}
}
