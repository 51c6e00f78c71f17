package state_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

const realSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: resume-real
defaults:
  timeout: 1m
state:
  namespace: %[1]s
steps:
  - name: a
    helm:
      chart: ./chart
      namespace: %[1]s
      valuesFrom:
        - file: ./values-a.yaml
  - name: b
    needs: [a]
    patch:
      target: configmap/${B_TARGET:-missing}
      namespace: %[1]s
      type: merge
      patch:
        metadata:
          labels:
            patched: "true"
  - name: c
    needs: [b]
    job:
      image: busybox
      namespace: %[1]s
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// realApply runs the spec with the real executors and the state record, as
// khook apply does.
func realApply(t *testing.T, ctx context.Context, file string, set ...string) []model.StepResult {
	t.Helper()
	rd := redact.New()
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}, Set: set, VarPrefix: "KHOOK_VAR_", SecretPrefix: "KHOOK_SECRET_", Redactor: rd})
	if err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClientsForConfig(state.SharedCluster().RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	helm := helmstep.New(c, s.BaseDir, rd)
	defer helm.Close()
	env := steps.NewEnv(c, s.BaseDir, rd)
	byType := map[string]runner.Executor{spec.TypeHelm: helm, spec.TypePatch: steps.NewPatchExecutor(env), spec.TypeJob: steps.NewJobExecutor(env)}
	sess, err := state.Open(ctx, s, state.Options{Client: c.Typed, Version: "test", Redactor: rd})
	if err != nil {
		t.Fatal(err)
	}
	eng := runner.ForSpec(s, runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		return byType[st.Type()].Execute(ctx, st)
	}))
	eng.Redactor, eng.Resume, eng.OnFinish = rd, sess.Resume, sess.OnFinish
	res := eng.Run(ctx)
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return res
}

func outcome(res []model.StepResult) string {
	out := ""
	for _, r := range res {
		how := string(r.Status)
		if r.SkipReason == state.ResumeReason {
			how = "resumed"
		}
		out += fmt.Sprintf("%s=%s ", r.Name, how)
	}
	return out
}

func TestResumeWithRealExecutors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kube := state.SharedCluster()
	ns := kube.Namespace(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"khook.yaml":                fmt.Sprintf(realSpec, ns),
		"values-a.yaml":             "greeting: hello\n",
		"chart/Chart.yaml":          "apiVersion: v2\nname: resume\nversion: 0.1.0\n",
		"chart/templates/text.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-text\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
	})
	file := filepath.Join(dir, "khook.yaml")
	cms := kube.Client.CoreV1().ConfigMaps(ns)

	// Run 1 fails at b (its patch target does not exist).
	if got := outcome(realApply(t, ctx, file)); got != "a=ok b=failed c=skipped " {
		t.Fatalf("run 1: %s", got)
	}
	rec, err := state.NewStore(kube.Client, state.Ref{Namespace: ns, Name: "khook-state-resume-real"}).Load(ctx)
	if err != nil || rec.Steps["a"].Status != "ok" || rec.Steps["b"].Status != "failed" || rec.Steps["c"].Status != "skipped" {
		t.Fatalf("record after run 1: %+v, %v", rec, err)
	}

	// Delete a's object out-of-band: the resumed run must leave it deleted.
	if err := cms.Delete(ctx, "a-text", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "present"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := outcome(realApply(t, ctx, file, "B_TARGET=present")); got != "a=resumed b=ok c=ok " {
		t.Fatalf("run 2: %s", got)
	}
	if _, err := cms.Get(ctx, "a-text", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a's ConfigMap after the resumed run: %v; want it still deleted", err)
	}

	// Editing the values file a references re-runs a, and only a.
	writeFiles(t, dir, map[string]string{"values-a.yaml": "greeting: bonjour\n"})
	if got := outcome(realApply(t, ctx, file, "B_TARGET=present")); got != "a=ok b=resumed c=resumed " {
		t.Fatalf("run 3: %s", got)
	}
	cm, err := cms.Get(ctx, "a-text", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "bonjour" {
		t.Fatalf("a's ConfigMap after run 3: %v, %v; want greeting bonjour", cm, err)
	}
}
