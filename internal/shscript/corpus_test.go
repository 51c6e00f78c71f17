package shscript

import (
	"reflect"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// Tests on the scripts vendored after the first seven (SOURCES.md).

func TestFairwindsCertManagerPreTest(t *testing.T) {
	res, s := load(t, "fairwinds", "stable/insights-admission/ci/pre-test-script.sh")
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"namespace-cert-manager", "cert-manager"}) {
		t.Fatalf("steps %v", got)
	}
	h := s.Steps[1].Helm
	if h.Chart != "cert-manager" || h.Repo != "https://charts.jetstack.io" || h.Version != "v1.11.0" || h.Namespace != "cert-manager" || !h.Wait {
		t.Errorf("helm %+v", h)
	}
	// --set installCRDs=true is typed as helm types it: a bool.
	if v, ok := h.Values["installCRDs"].(bool); !ok || !v {
		t.Errorf("values %#v", h.Values)
	}
	// repo add/update fold into repo:; `helm get notes … || helm install` is the existence check.
	f := fates(res.Model)
	if f[2] != importer.FateFolded || f[3] != importer.FateFolded || f[4] != importer.FateStep {
		t.Errorf("fates %v", f)
	}
	var five []importer.Fate
	for _, c := range res.Model.Commands {
		if c.Line == 5 {
			five = append(five, c.Fate)
		}
	}
	if !reflect.DeepEqual(five, []importer.Fate{importer.FateReadOnly, importer.FateStep}) {
		t.Errorf("line 5: %v", five)
	}
	checkOrder(t, res, s)
	if res.Model.Verdict() != importer.Faithful {
		t.Errorf("verdict %s %v", res.Model.Verdict(), res.Model.NotCarried)
	}
}

func TestFairwindsFleetInstallRetry(t *testing.T) {
	res, s := load(t, "fairwinds", "scripts/fleet-install-test.sh")
	want := []string{"insights-agent", "wait-job-fleet-installer", "wait-job-polaris", "wait-job-workloads"}
	if got := stepNames(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v", got)
	}
	// The helm upgrade is the condition of `while ! helm …; do sleep; done`: a retry, carried once.
	h := s.Steps[0].Helm
	if h.Release != "insights-agent" || h.Namespace != "insights-agent" || !h.CreateNamespace || !strings.HasSuffix(h.ValuesFrom[0].File, "stable/insights-agent/ci/fleet-install-test.yaml") {
		t.Errorf("helm %+v", h)
	}
	if !strings.Contains(string(res.Spec), "cluster: test-fleet-${random_number}") {
		t.Errorf("--set insights.cluster=\"$cluster_name\" not carried:\n%s", res.Spec)
	}
	// case "$CHANGED" in *insights-agent*) is a glob: contains, not equality.
	for _, st := range s.Steps {
		if !strings.Contains(st.When, `vars.get("CHANGED", "").contains("insights-agent")`) {
			t.Errorf("step %s when %q", st.Name, st.When)
		}
	}
	w := s.Steps[1]
	if w.Wait.For != "condition=Complete" || w.Wait.On != "job/fleet-installer" || w.Wait.Namespace != "insights-agent" || w.Timeout.String() != "2m0s" {
		t.Errorf("wait %+v %s", w.Wait, w.Timeout)
	}
	if f := fates(res.Model); f[37] != importer.FateStep || f[35] != importer.FateFolded {
		t.Errorf("fates %v", f)
	}
	if v := res.Model.Var("CHANGED"); v == nil || !v.Required {
		t.Errorf("CHANGED %+v", v)
	}
	checkOrder(t, res, s)
}

func TestCasePatternGlob(t *testing.T) {
	for p, want := range map[string]string{
		"prod":  `v == "prod"`,
		"*x*":   `v.contains("x")`,
		"dev*":  `v.startsWith("dev")`,
		"*-eu":  `v.endsWith("-eu")`,
		"a?b*c": `v.matches("^a.b.*c$")`,
	} {
		if got := globCEL("v", p, p != "prod"); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
}
