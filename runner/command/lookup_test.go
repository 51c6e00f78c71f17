package command

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/spec"
)

const lookupSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: lookups
steps:
  - name: app
    helm:
      chart: %[2]s
      namespace: %[1]s
      values:
        fail: %[3]v
`

const (
	lookedUpPassword = "l00ked-up-pa55word"
	lookedUpKey      = "-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n0nSecretKeyLineTwo42xyz\n-----END TEST KEY-----"
)

// lookedUpForms are the printed forms of the Secret's values none of the
// outputs may hold.
func lookedUpForms() []string {
	out := []string{lookedUpPassword, base64.StdEncoding.EncodeToString([]byte(lookedUpPassword)), base64.StdEncoding.EncodeToString([]byte(lookedUpKey))}
	for _, l := range strings.Split(lookedUpKey, "\n") {
		if !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

func lookupFixture(t *testing.T, fail bool) (ns string, s *spec.Spec) {
	t.Helper()
	ns = testCluster.Namespace(t)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		StringData: map[string]string{"password": lookedUpPassword, "key": lookedUpKey}}
	if _, err := testCluster.Client.CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	chart, _ := filepath.Abs("../../test/testdata/charts/lookup")
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(lookupSpec, ns, chart, fail)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	return ns, s
}

func assertMasked(t *testing.T, where, text string) {
	t.Helper()
	for _, f := range lookedUpForms() {
		if strings.Contains(text, f) {
			t.Errorf("%s holds %q:\n%s", where, f, text)
		}
	}
}

// TestLookedUpSecretsAreMaskedInThePlan: a chart renders a Secret it looks
// up into a ConfigMap; the plan shows the change with ***, in text and
// JSON, and apply installs the real value.
func TestLookedUpSecretsAreMaskedInThePlan(t *testing.T) {
	ns, s := lookupFixture(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New()
	cfg := &Configuration{Clients: clients, Redactor: red}
	p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	report.WritePlanText(&text, p)
	report.WriteJSON(&js, p)
	assertMasked(t, "the plan", text.String())
	assertMasked(t, "the plan's JSON", js.String())
	if d := p.Steps[0].Diff; !strings.Contains(d, `password: '***'`) && !strings.Contains(d, `password: "***"`) && !strings.Contains(d, "password: ***") {
		t.Errorf("the diff does not show the ConfigMap's password as ***:\n%s", d)
	}
	res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("apply: %v %+v", err, res)
	}
	cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, "app-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["password"] != lookedUpPassword {
		t.Errorf("apply installed password %q, want the looked-up value", cm.Data["password"])
	}
}

// TestLookedUpSecretInAFailMessageIsMasked: the value a template puts in
// fail reaches the plan as ***.
func TestLookedUpSecretInAFailMessageIsMasked(t *testing.T) {
	_, s := lookupFixture(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	p, err := (&PlanCommand{Config: &Configuration{Clients: clients, Redactor: redact.New()}, Diff: true}).Run(ctx, s)
	var text bytes.Buffer
	if err != nil {
		text.WriteString(err.Error())
	} else {
		report.WritePlanText(&text, p)
		report.WriteJSON(&text, p)
	}
	assertMasked(t, "the plan of a chart that fails", text.String())
	if !strings.Contains(text.String(), "the password *** is too short") {
		t.Errorf("the fail message is not shown, masked:\n%s", text.String())
	}
}

// TestLookupSecretsDeny: the chart's lookup gets nothing, the plan says so
// naming the chart, and no value of the Secret was read.
func TestLookupSecretsDeny(t *testing.T) {
	_, s := lookupFixture(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Every read of a Secret that reaches the API server, but Helm's
	// release storage (which the plan reads, lookup or not).
	var reads []string
	var mu sync.Mutex
	cfg := rest.CopyConfig(testCluster.RESTConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			p := req.URL.Path
			if strings.Contains(p, "/secrets") && !strings.Contains(p, "sh.helm.release.v1.") && !strings.Contains(req.URL.RawQuery, "owner%3Dhelm") {
				mu.Lock()
				reads = append(reads, req.Method+" "+req.URL.String())
				mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	clients, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New()
	p, err := (&PlanCommand{Config: &Configuration{Clients: clients, Redactor: red, LookupSecrets: runplan.LookupDeny}, Diff: true}).Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if sum := p.Steps[0].Summary; !strings.Contains(sum, "lookup-secrets: deny: chart lookup looked up Secrets and got none") {
		t.Errorf("the plan does not say the lookups were denied: %q", sum)
	}
	if !strings.Contains(p.Steps[0].Diff, `found: "no"`) && !strings.Contains(p.Steps[0].Diff, "found: \"no\"") {
		t.Errorf("the chart saw the Secret:\n%s", p.Steps[0].Diff)
	}
	if red.String(lookedUpPassword) != lookedUpPassword {
		t.Errorf("the Secret was read: its value is registered")
	}
	if len(reads) > 0 {
		t.Errorf("the plan read Secrets from the API server: %q", reads)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAChangedLookedUpValueChangesTheKeyedPlan: the plan holds the value
// masked, yet with a plan key its digests still tell that the looked-up
// value changed, so apply --plan refuses a plan made before the change.
func TestAChangedLookedUpValueChangesTheKeyedPlan(t *testing.T) {
	ns, s := lookupFixture(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	plan := func() *model.Plan {
		t.Helper()
		p, err := (&PlanCommand{Config: &Configuration{Clients: clients, Redactor: redact.New(), PlanKey: []byte("k3y-for-the-test")}}).Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		report.WriteJSON(&js, p)
		assertMasked(t, "the keyed plan", js.String())
		return p
	}
	before := plan()
	sec, err := testCluster.Client.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["password"] = []byte(lookedUpPassword + "-rotated")
	if _, err := testCluster.Client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := plan(); after.Fingerprint == before.Fingerprint {
		t.Errorf("the plan's fingerprint did not change with the looked-up value (%s)", after.Fingerprint)
	}
}
