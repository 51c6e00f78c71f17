package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
)

const (
	lookupPassword = "l00ked-up-e2e-pa55word"
	lookupKey      = "-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9e2e\nlookedUpSecondKeyLine42xyz\n-----END TEST KEY-----"
)

// lookupNeedles: the values in raw, base64 and per-line form.
func lookupNeedles() []string {
	out := []string{lookupPassword, lookupKey}
	for _, v := range []string{lookupPassword, lookupKey} {
		out = append(out, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)))
	}
	for _, l := range strings.Split(lookupKey, "\n") {
		if !strings.HasPrefix(l, "-----") {
			out = append(out, l, base64.StdEncoding.EncodeToString([]byte(l)))
		}
	}
	return out
}

// TestLookedUpSecretsNeverLeaveTheRun: a chart that looks up a Secret and
// renders it into a ConfigMap (and a variant into fail): across every sink
// of khook ci the values appear in no printed form, the plan shows the
// ConfigMap change with ***, and apply installs the real value.
func TestLookedUpSecretsNeverLeaveTheRun(t *testing.T) {
	ns := kube.Namespace(t)
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		StringData: map[string]string{"password": lookupPassword, "key": lookupKey}}
	if _, err := kube.Client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(citest.RepoRoot(), "test", "testdata", "charts", "lookup")
	start := time.Now().Add(-time.Second)
	sinks := map[string]string{}
	srv := githubtest.New()
	defer srv.Close()

	for _, fail := range []bool{true, false} {
		vars := fmt.Sprintf("NS=%s\nCHART=%s\nFAIL=%v", ns, chart, fail)
		g := newRunner(t, srv.URL, "lookup.yaml", map[string]string{"command": "plan", "diff": "true", "comment": "always", "vars": vars, "plan-file": ".khook/khook.plan"})
		res := citest.Run(t, g.Workspace, g.Environ)
		name := fmt.Sprintf("plan fail=%v", fail)
		if !fail && res.Code != 0 {
			t.Fatalf("%s exit %d\n%s\n%s", name, res.Code, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stdout, "::add-mask::"+lookupPassword) {
			t.Errorf("%s: the looked-up password is not announced with ::add-mask::", name)
		}
		sinks[name+" stdout"], sinks[name+" stderr"] = withoutMasks(res.Stdout), res.Stderr
		sinks[name+" GITHUB_OUTPUT"], sinks[name+" summary"] = g.Read(t, "output"), g.Read(t, "summary")
		for f, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
			sinks[name+" "+f] = body
		}
		if fail {
			if !strings.Contains(res.Stdout+g.Read(t, "summary"), "the password *** is too short") {
				t.Errorf("the fail message is not shown masked:\n%s", res.Stdout)
			}
			continue
		}
		if !strings.Contains(sinks[name+" summary"], "***") {
			t.Errorf("the plan's summary shows no ***:\n%s", sinks[name+" summary"])
		}
		show := citest.Run(t, g.Workspace, nil, "show", filepath.Join(g.Workspace, ".khook", "khook.plan"))
		sinks["show"] = show.Stdout + show.Stderr

		g.ResetFiles()
		g.Set("INPUT_COMMAND=apply")
		res = citest.Run(t, g.Workspace, g.Environ)
		if res.Code != 0 {
			t.Fatalf("apply exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		sinks["apply stdout"], sinks["apply stderr"] = withoutMasks(res.Stdout), res.Stderr
		sinks["apply summary"] = g.Read(t, "summary")
		for f, body := range readDir(t, filepath.Join(g.Workspace, ".khook")) {
			sinks["apply "+f] = body
		}
	}
	for i, c := range srv.Comments(7) {
		sinks[fmt.Sprintf("comment %d", i)] = c.Body
	}
	for name, text := range sinks {
		for _, s := range lookupNeedles() {
			if strings.Contains(text, s) {
				t.Errorf("%q leaked into %s", s, name)
			}
		}
	}
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "app-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["password"] != lookupPassword {
		t.Errorf("apply installed %q, want the looked-up password", cm.Data["password"])
	}
	// The audit check of TestForkPlanDeniesLookups sees a lookup when
	// there is one: here (mask) the chart's lookup reads db.
	if _, others, audited := secretReadsByKhook(t, ns, start); audited && !slices.ContainsFunc(others, func(ev cluster.AuditEvent) bool { return ev.Name == "db" }) {
		t.Errorf("the audit log shows no read of Secret db by khook: %+v", others)
	}
}

// TestForkPlanDeniesLookups: a pull request from a fork plans with
// lookup-secrets: deny: the plan succeeds, says the lookups were denied,
// and never holds the value.
func TestForkPlanDeniesLookups(t *testing.T) {
	ns := kube.Namespace(t)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, StringData: map[string]string{"password": lookupPassword, "key": lookupKey}}
	if _, err := kube.Client.CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := githubtest.New()
	defer srv.Close()
	chart := filepath.Join(citest.RepoRoot(), "test", "testdata", "charts", "lookup")
	g := newRunner(t, srv.URL, "lookup.yaml", map[string]string{"command": "plan", "diff": "true", "comment": "always",
		"vars": fmt.Sprintf("NS=%s\nCHART=%s\nFAIL=false", ns, chart)})
	event := `{"action":"synchronize","number":7,"pull_request":{"number":7,"head":{"sha":"0123456789abcdef0123456789abcdef01234567","repo":{"fork":true}}}}`
	if err := os.WriteFile(filepath.Join(g.Dir, "event.json"), []byte(event), 0o644); err != nil {
		t.Fatal(err)
	}
	// The audit log's clock is the API server's, on this machine.
	start := time.Now().Add(-time.Second)
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	// khook read no Secret of the namespace: only Helm's release storage,
	// which must see the release's records to plan an upgrade, read
	// Secrets, and only by owner=helm or a record's name.
	storage, others, audited := secretReadsByKhook(t, ns, start)
	switch {
	case !audited:
		t.Log("no audit log (a connected cluster): the reads of Secrets are not checked")
	case len(storage) > 0:
		t.Logf("khook's reads of Secrets: %d of Helm's release storage, the first %s %s (%s)", len(storage), storage[0].Verb, storage[0].RequestURI, storage[0].UserAgent)
	default:
		t.Errorf("the audit log shows no read of Helm's release storage by khook in %s: is khook's User-Agent %q?", ns, "khook/...")
	}
	for _, ev := range others {
		t.Errorf("the fork's plan read a Secret: %s %s by %q", ev.Verb, ev.RequestURI, ev.UserAgent)
	}
	if !strings.Contains(res.Stdout, "lookup-secrets: deny: chart lookup looked up Secrets and got none") {
		t.Errorf("the plan does not say the lookups were denied:\n%s", res.Stdout)
	}
	if strings.Contains(res.Stdout, "::add-mask::"+lookupPassword) || strings.Contains(res.Stdout, lookupPassword) {
		t.Errorf("the fork's plan read the Secret:\n%s", res.Stdout)
	}
}
