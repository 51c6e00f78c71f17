package state_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/state"
)

// TestUpstreamRecordIsConverted: a record upstream khook (dvrkn/khook,
// internal/state) wrote is read, said once to be converted, runs every
// step once more (upstream's input hashes are not khook's), and is
// khook's own record after the run's first write.
func TestUpstreamRecordIsConverted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := state.SharedCluster().Namespace(t)
	raw, err := os.ReadFile("testdata/upstream-record.json")
	if err != nil {
		t.Fatal(err)
	}
	// As upstream's Store.newSecret writes it.
	_, err = state.SharedCluster().Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "khook-state-resume", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "khook"}},
		Type:       corev1.SecretTypeOpaque, Data: map[string][]byte{state.DataKey: raw}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := resumeSpec(t, ns)
	prev := load(t, ctx, s)
	if got := statuses(prev); got != "a=ok b=failed c=skipped" {
		t.Errorf("converted statuses = %s, want a=ok b=failed c=skipped", got)
	}
	if prev.RunStatus != state.RunFailed || prev.KhookVersion != "v0.9.2" || prev.Steps["b"].Error == "" || prev.Steps["c"].SkipReason != "needs b, which failed" {
		t.Errorf("converted record = %+v", prev)
	}

	var notes []string
	open := func() *state.Session {
		sess, err := state.Open(ctx, s, state.Options{Client: state.SharedCluster().Client, Version: "test", Redactor: redact.New(),
			Notify: func(m string) { notes = append(notes, m) }})
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	sess := open()
	for _, st := range s.Steps {
		if reason, skip := sess.Resume(st); skip {
			t.Errorf("step %s resumed from upstream's record (%s): upstream's input hash cannot be khook's", st.Name, reason)
		}
		sess.OnFinish(model.StepResult{Name: st.Name, Status: model.StatusOK, Attempts: 1})
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "upstream khook (khook.io/state.v1, khook v0.9.2)") || !strings.Contains(notes[0], "converts it") {
		t.Fatalf("notes = %q, want one that says the upstream record is converted", notes)
	}
	sec, err := state.SharedCluster().Client.CoreV1().Secrets(ns).Get(ctx, "khook-state-resume", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sec.Data[state.DataKey]), state.UpstreamAPIVersion) {
		t.Errorf("the record is still upstream's after the run wrote it:\n%s", sec.Data[state.DataKey])
	}
	after := load(t, ctx, s)
	if _, ok := after.Steps["gone"]; ok || statuses(after) != "a=ok b=ok c=ok" {
		t.Errorf("record after the run = %+v", after.Steps)
	}

	// Said once: the next run reads khook's own record, and resumes.
	sess = open()
	if _, skip := sess.Resume(s.Steps[0]); !skip || sess.Converted != "" {
		t.Errorf("second run: resumes a = %v, converted note %q", skip, sess.Converted)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 {
		t.Errorf("notes = %q, want the conversion said once", notes)
	}
}
