package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/e2e/apiproxy"
)

// The plaintexts of testdata/sops (gen.sh encrypts them with the real sops
// CLI for TEST-ONLY-age.key).
const (
	sopsValue   = "Values-S3cret-9f2b"
	sopsChanged = "Values-S3cret-CHANGED-41d"
	sopsPass    = "Db-Passw0rd-7c1e"
)

// sopsRun runs khook on a copy of testdata/sops through a counting proxy,
// with TMPDIR pointed at a fresh directory the test scans afterwards.
type sopsRun struct {
	t     *testing.T
	ns    string
	dir   string // the copy of testdata/sops
	tmp   string // the runs' TMPDIR
	proxy *apiproxy.Proxy
	key   string // SOPS_AGE_KEY_FILE; "" for none
}

func newSopsRun(t *testing.T) *sopsRun {
	root := t.TempDir()
	dir := filepath.Join(root, "sops")
	must(t, os.CopyFS(dir, os.DirFS(testdata("sops"))))
	must(t, os.Symlink(testdata("charts"), filepath.Join(root, "charts")))
	return &sopsRun{t: t, ns: namespace(t), dir: dir, tmp: t.TempDir(), proxy: apiproxy.Start(t, kc.RESTConfig),
		key: filepath.Join(dir, "TEST-ONLY-age.key")}
}

func (r *sopsRun) run(args ...string) (outcome, []string) {
	r.t.Helper()
	before, _ := r.proxy.Writes()
	env := []string{"TMPDIR=" + r.tmp, "KHOOK_PLAN_KEY=" + planKey}
	if r.key != "" {
		env = append(env, "SOPS_AGE_KEY_FILE="+r.key)
	}
	args = append(args, "-f", filepath.Join(r.dir, "spec.yaml"), "--set", "NS="+r.ns)
	out := khook(r.t, invocation{Args: args, Env: env, Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
	after, _ := r.proxy.Writes()
	return out, after[len(before):]
}

// noPlaintext fails if any text, or any file under the runs' TMPDIR, holds
// a plaintext in a form the redactor knows.
func (r *sopsRun) noPlaintext(texts map[string]string) {
	r.t.Helper()
	_ = filepath.WalkDir(r.tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil {
				texts["TMPDIR file "+p] = string(data)
			}
		}
		return nil
	})
	for _, secret := range []string{sopsValue, sopsChanged, sopsPass} {
		for _, form := range secretForms(secret) {
			for name, text := range texts {
				if strings.Contains(text, form) {
					r.t.Errorf("%s holds the plaintext %q as %q", name, secret, form)
				}
			}
		}
	}
}

// An encrypted values file installs a chart with its decrypted values, and
// an encrypted Secret manifest (only stringData encrypted) is applied; the
// plaintext is in no output, no plan file and no file left under TMPDIR. A
// changed encrypted value plans as a masked change (exit 2), which apply
// --plan of the older plan refuses.
func TestSopsFilesApply(t *testing.T) {
	r := newSopsRun(t)
	texts := map[string]string{}
	out, _ := r.run("apply", "-o", "json")
	if out.Code != 0 {
		t.Fatalf("apply: exit %d\nstdout:\n%s\nstderr:\n%s", out.Code, out.Stdout, out.Stderr)
	}
	texts["apply -o json stdout"], texts["apply stderr"] = out.Stdout, out.Stderr
	ctx := context.Background()
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "sops-demo-settings", metav1.GetOptions{})
	must(t, err)
	if cm.Data["greeting"] != sopsValue {
		t.Errorf("the chart got greeting %q; want the decrypted value", cm.Data["greeting"])
	}
	sec, err := kc.Client.CoreV1().Secrets(r.ns).Get(ctx, "db-credentials", metav1.GetOptions{})
	must(t, err)
	if string(sec.Data["password"]) != sopsPass || sec.Labels["app"] != "e2e-sops" {
		t.Errorf("the Secret holds %q, labels %v; want the decrypted password and the clear label", sec.Data["password"], sec.Labels)
	}

	// Unchanged: nothing to do.
	out, _ = r.run("plan", "--diff", "--detailed-exitcode")
	texts["plan unchanged"] = out.Stdout + out.Stderr
	if out.Code != 0 {
		t.Errorf("plan of the applied files: exit %d; want 0\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	out, _ = r.run("plan", "--out", "before.plan")
	if out.Code != 0 {
		t.Fatalf("plan --out: exit %d\n%s", out.Code, out.Stderr)
	}
	// Changed encrypted value: a masked change.
	out, _ = r.run("plan", "--diff", "--detailed-exitcode", "--set", "VALUES=values-changed.enc.yaml")
	texts["plan changed"] = out.Stdout + out.Stderr
	if out.Code != 2 || !strings.Contains(out.Stdout, "***") {
		t.Errorf("plan of a changed encrypted value: exit %d, want 2 and a masked change\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	t.Logf("plan of a changed encrypted value:\n%s", out.Stdout)
	out, _ = r.run("plan", "-o", "json", "--diff", "--set", "VALUES=values-changed.enc.yaml")
	texts["plan -o json changed"] = out.Stdout + out.Stderr
	// The reviewed plan's digest sees the changed value.
	out, writes := r.run("apply", "--plan", "before.plan", "--set", "VALUES=values-changed.enc.yaml")
	texts["apply --plan"] = out.Stdout + out.Stderr
	if out.Code != 1 || !strings.Contains(out.Stdout+out.Stderr, "app") || len(writes) != 0 {
		t.Errorf("apply --plan of a plan made before the value changed: exit %d, %d writes; want 1, refused, none\n%s%s", out.Code, len(writes), out.Stdout, out.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "before.plan"))
	must(t, err)
	texts["plan file"] = string(data)
	r.noPlaintext(texts)
}

// A file no key opens (no key, the wrong key) or one edited without sops:
// exit 1, a sentence naming the file (and for a key, the recipients), and
// nothing written to the cluster.
func TestSopsFilesRefused(t *testing.T) {
	const recipient = "age1nydme8suxwq3h40r3uajswjk00nhjhhqcmm2m4fwmdg3lf7ceq2q9g88ud"
	cases := []struct {
		name string
		prep func(r *sopsRun)
		want []string
	}{
		{"no key", func(r *sopsRun) { r.key = "" },
			[]string{"cannot decrypt manifest file secret.enc.yaml: no available key opens it", recipient}},
		{"wrong key", func(r *sopsRun) { r.key = filepath.Join(r.dir, "TEST-ONLY-wrong-age.key") },
			[]string{"cannot decrypt valuesFrom[0] file values.enc.yaml: no available key opens it", recipient}},
		{"tampered", func(r *sopsRun) {
			p := filepath.Join(r.dir, "secret.enc.yaml")
			data, err := os.ReadFile(p)
			must(r.t, err)
			must(r.t, os.WriteFile(p, bytes.Replace(data, []byte("app: e2e-sops"), []byte("app: e2e-edited"), 1), 0o644))
		}, []string{"refusing manifest file secret.enc.yaml: its MAC does not verify"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newSopsRun(t)
			r.t = t
			c.prep(r)
			for _, cmd := range [][]string{{"apply"}, {"plan"}} {
				out, writes := r.run(cmd...)
				for _, w := range c.want {
					if !strings.Contains(out.Stderr, w) {
						t.Errorf("%s: stderr does not say %q:\n%s", cmd[0], w, out.Stderr)
					}
				}
				if out.Code != 1 || len(writes) != 0 {
					t.Errorf("%s: exit %d, writes %q; want 1 and none", cmd[0], out.Code, writes)
				}
			}
			if _, err := kc.Client.CoreV1().Secrets(r.ns).Get(context.Background(), "db-credentials", metav1.GetOptions{}); err == nil {
				t.Error("the Secret was created")
			}
		})
	}
}

// validate and plan --offline use no keys: an encrypted file is checked for
// its structure and said not to be decrypted, which is no error.
func TestSopsFilesOffline(t *testing.T) {
	r := newSopsRun(t)
	r.key = ""
	for _, cmd := range [][]string{{"validate"}, {"plan", "--offline"}} {
		out, _ := r.run(cmd...)
		if out.Code != 0 || !strings.Contains(out.Stdout+out.Stderr, "values.enc.yaml is sops-encrypted (for age age1nydme8") ||
			!strings.Contains(out.Stdout+out.Stderr, "could not be decrypted without keys") {
			t.Errorf("%s without keys: exit %d\nstdout:\n%s\nstderr:\n%s", cmd[0], out.Code, out.Stdout, out.Stderr)
		}
		// A manifest encrypted whole: its values are ciphertext strings, no
		// schema problem; a chart with encrypted values is not rendered.
		args := append(cmd, "-f", filepath.Join(r.dir, "offline.yaml"))
		out = khook(t, invocation{Args: args, Dir: r.dir})
		if out.Code != 0 || !strings.Contains(out.Stdout+out.Stderr, "deployment.enc.yaml is sops-encrypted") {
			t.Errorf("%s of offline.yaml without keys: exit %d\nstdout:\n%s\nstderr:\n%s", cmd[0], out.Code, out.Stdout, out.Stderr)
		}
	}
}

// kill -9 while Helm waits on a release installed from an encrypted values
// file leaves no file holding the plaintext under TMPDIR: it was never
// written.
func TestSopsFilesKill9LeavesNoPlaintext(t *testing.T) {
	r := newSopsRun(t)
	cmd, stdout, stderr := command(t, invocation{Args: []string{"apply", "-f", filepath.Join(r.dir, "stuck.yaml"), "--set", "NS=" + r.ns},
		Env: []string{"TMPDIR=" + r.tmp, "SOPS_AGE_KEY_FILE=" + r.key}, Dir: r.dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := kc.Client.CoreV1().ConfigMaps(r.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=sops-stuck-settings"})
	must(t, err)
	defer w.Stop()
	must(t, cmd.Start())
	select {
	case <-w.ResultChan(): // the chart is applied: Helm is waiting for its pods
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the release never got its ConfigMap\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(context.Background(), "sops-stuck-settings", metav1.GetOptions{})
	must(t, err)
	if cm.Data["greeting"] != sopsValue {
		t.Errorf("the chart got greeting %q; want the decrypted value", cm.Data["greeting"])
	}
	r.noPlaintext(map[string]string{"stdout": stdout.String(), "stderr": stderr.String()})
}

// valuesFrom.secretKeyRef installs a chart with a value from a Secret, which
// shows in no output; a changed value in the Secret plans as a masked
// change.
func TestValuesFromSecretKeyRef(t *testing.T) {
	const secret, changed = "From-A-Secret-5e3a", "From-A-Secret-CHANGED-8b"
	r := newSopsRun(t)
	ctx := context.Background()
	_, err := kc.Client.CoreV1().ConfigMaps(r.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-values"},
		Data: map[string]string{"values.yaml": "greeting: from-a-configmap\npodAnnotations: {team: e2e}\n"}}, metav1.CreateOptions{})
	must(t, err)
	s, err := kc.Client.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret"},
		StringData: map[string]string{"greeting": secret}}, metav1.CreateOptions{})
	must(t, err)
	texts := map[string]string{}
	args := []string{"-f", filepath.Join(r.dir, "keyref.yaml"), "--set", "NS=" + r.ns}
	run := func(name string, a ...string) outcome {
		out := khook(t, invocation{Args: append(a, args...), Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
		texts[name] = out.Stdout + out.Stderr
		return out
	}
	if out := run("apply", "apply", "-o", "json"); out.Code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "keyref-settings", metav1.GetOptions{})
	must(t, err)
	if cm.Data["greeting"] != secret {
		t.Errorf("the chart got greeting %q; want the Secret's value", cm.Data["greeting"])
	}
	if out := run("plan unchanged", "plan", "--detailed-exitcode"); out.Code != 0 {
		t.Errorf("plan after apply: exit %d; want 0\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	s.StringData = map[string]string{"greeting": changed}
	_, err = kc.Client.CoreV1().Secrets(r.ns).Update(ctx, s, metav1.UpdateOptions{})
	must(t, err)
	out := run("plan changed", "plan", "--diff", "--detailed-exitcode")
	if out.Code != 2 || !strings.Contains(out.Stdout, "greeting: '***") {
		t.Errorf("plan of a changed Secret value: exit %d; want 2 and a masked change\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	run("plan changed json", "plan", "--diff", "-o", "json")
	for _, v := range []string{secret, changed} {
		for _, form := range secretForms(v) {
			for name, text := range texts {
				if strings.Contains(text, form) {
					t.Errorf("%s holds the Secret's value %q as %q", name, v, form)
				}
			}
		}
	}
}

// valuesFrom.secretKeyRef of a Secret an earlier step makes: the plan says
// the step is unknown until that step has run, naming it, and fails
// nothing (a step that needs none fails, as apply would); apply reads the value once the Secret is there (46zn's D3: a
// script's helm upgrade with the password its first install generated).
func TestValuesFromSecretAnEarlierStepMakes(t *testing.T) {
	const secret = "Made-Earlier-7c1d"
	r := newSopsRun(t)
	texts := map[string]string{}
	run := func(name string, a ...string) outcome {
		out := khook(t, invocation{Args: append(a, "-f", filepath.Join(r.dir, "keyref-earlier.yaml"), "--set", "NS="+r.ns),
			Env: []string{"KHOOK_SECRET_GREETING=" + secret}, Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
		texts[name] = out.Stdout + out.Stderr
		return out
	}
	out := run("plan", "plan", "--detailed-exitcode")
	if out.Code != 2 || !strings.Contains(out.Stdout, "Secret "+r.ns+"/made-secret does not exist yet: step credentials applies it") {
		t.Errorf("plan: exit %d; want 2 and the app step unknown until credentials has run\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	// No step before it: apply would fail, so the plan does.
	missing := khook(t, invocation{Args: []string{"plan", "--detailed-exitcode", "-f", filepath.Join(r.dir, "keyref-missing.yaml"), "--set", "NS=" + r.ns}, Dir: r.dir, Kubeconfig: r.proxy.Kubeconfig})
	if missing.Code != 1 || !strings.Contains(missing.Stdout+missing.Stderr, "nobody-makes-it key greeting does not exist") {
		t.Errorf("plan of a Secret no step makes: exit %d; want 1 and the reason\n%s%s", missing.Code, missing.Stdout, missing.Stderr)
	}
	if out := run("apply", "apply"); out.Code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	cm, err := kc.Client.CoreV1().ConfigMaps(r.ns).Get(context.Background(), "keyref-earlier-settings", metav1.GetOptions{})
	must(t, err)
	if cm.Data["greeting"] != secret {
		t.Errorf("the chart got greeting %q; want the Secret's value", cm.Data["greeting"])
	}
	for _, form := range secretForms(secret) {
		for name, text := range texts {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the Secret's value as %q", name, form)
			}
		}
	}
}
