package e2e

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A typo'd field (resourcess: under a container) fails plan --diff and
// apply with the API server's sentence at the field's line, and nothing is
// created.
func TestStrictUnknownFieldFailsPlanAndApply(t *testing.T) {
	ns := namespace(t)
	spec := testdata("strict", "typo.yaml")
	wantAt := "strict/web.yaml:16:11"

	// The step plans as fail with apply's sentence, as every refusal does
	// (#33); the gates decide what a would-fail plan exits with.
	plan := khook(t, invocation{Args: []string{"plan", "--diff", "-f", spec, "--set", "NS=" + ns}})
	out := plan.Stdout + plan.Stderr
	for _, want := range []string{`unknown field "spec.template.spec.containers[0].resourcess"`, wantAt, "Plan: 1 would fail."} {
		if !strings.Contains(out, want) {
			t.Errorf("plan --diff: exit %d, output:\n%s\nwant %q", plan.Code, out, want)
		}
	}

	apply := applySpec(t, spec, "NS="+ns)
	expectSteps(t, apply, []want{{Name: "web", Status: failed, Attempts: 1, Error: "resourcess"}})
	if apply.Results != nil && len(apply.Results.Steps) == 1 && !strings.Contains(apply.Results.Steps[0].Error, wantAt) {
		t.Errorf("apply error %q does not give %s", apply.Results.Steps[0].Error, wantAt)
	}
	_, err := kc.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment exists after the failed apply (%v); want nothing created", err)
	}
}

// The same typo in a chart's template fails the plan, at the field's line
// in the template's rendered output (Helm's own server dry run renders
// without sending the objects), and apply installs nothing.
func TestStrictUnknownFieldInAChartFailsPlan(t *testing.T) {
	ns := namespace(t)
	spec := testdata("strict", "typo-chart.yaml")
	// Line 27 of `helm template --show-only templates/web.yaml`: each
	// document there is "---", "# Source: ...", the document, a blank line.
	wantAt := "typo-chart/templates/web.yaml (rendered):27:11"

	plan := khook(t, invocation{Args: []string{"plan", "--diff", "-f", spec, "--set", "NS=" + ns}})
	out := plan.Stdout + plan.Stderr
	for _, want := range []string{"install failed: the API server rejected Deployment " + ns + "/typo-web", `resourcess: field not declared in schema`, wantAt, "Plan: 1 would fail."} {
		if plan.Code != 1 || !strings.Contains(out, want) {
			t.Errorf("plan --diff: exit %d, output:\n%s\nwant %q", plan.Code, out, want)
		}
	}

	apply := applySpec(t, spec, "NS="+ns)
	expectSteps(t, apply, []want{{Name: "web", Status: failed, Attempts: 1, Error: "resourcess"}})
	_, err := kc.Client.AppsV1().Deployments(ns).Get(context.Background(), "typo-web", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment exists after the plan and the failed apply (%v); want nothing written", err)
	}
}

// An object in an API version the server's version removed fails live and
// offline, naming the replacement.
func TestRemovedAPIVersionFailsLiveAndOffline(t *testing.T) {
	ns := namespace(t)
	spec := testdata("strict", "removed.yaml")
	const removal = "policy/v1beta1 PodDisruptionBudget was removed in v1.25: use policy/v1"
	for _, args := range [][]string{
		{"plan", "-f", spec, "--set", "NS=" + ns},
		{"plan", "--offline", "-f", spec, "--set", "NS=" + ns},
		{"validate", "-f", spec, "--set", "NS=" + ns},
	} {
		// A live plan says it as the step's fail (stdout), validate and an
		// offline plan as a problem (stderr).
		out := khook(t, invocation{Args: args})
		if text := out.Stdout + out.Stderr; out.Code == 0 || !strings.Contains(text, removal) || !strings.Contains(text, "removed.yaml:10:13") {
			t.Errorf("khook %s: exit %d, output:\n%s\nwant a failure saying %q at removed.yaml:10:13", strings.Join(args, " "), out.Code, text, removal)
		}
	}
	apply := applySpec(t, spec, "NS="+ns)
	expectSteps(t, apply, []want{{Name: "pdb", Status: failed, Attempts: 1, Error: removal}})

	// A kind whose type k8s.io/api no longer defines is removed too, not
	// "not served yet".
	spec = testdata("strict", "removed-hpa.yaml")
	const hpaRemoval = "autoscaling/v2beta2 HorizontalPodAutoscaler was removed in v1.26: use autoscaling/v2"
	for _, args := range [][]string{
		{"plan", "-f", spec, "--set", "NS=" + ns},
		{"validate", "-f", spec, "--set", "NS=" + ns},
	} {
		out := khook(t, invocation{Args: args})
		if text := out.Stdout + out.Stderr; out.Code == 0 || !strings.Contains(text, hpaRemoval) || !strings.Contains(text, "removed-hpa.yaml:10:13") {
			t.Errorf("khook %s: exit %d, output:\n%s\nwant a failure saying %q at removed-hpa.yaml:10:13", strings.Join(args, " "), out.Code, text, hpaRemoval)
		}
	}
}

// Offline, validate and plan --offline check the typo'd Deployment (in an
// apply step's file, and in a local chart's template) against the OpenAPI
// schemas khook carries, at the line the live plan names.
func TestOfflineValidationReportsTheTypoAtItsLine(t *testing.T) {
	for _, c := range []struct{ spec, at string }{
		{"typo.yaml", "strict/web.yaml:16:11"},
		{"typo-chart.yaml", "typo-chart/templates/web.yaml (rendered):27:11"},
	} {
		spec := testdata("strict", c.spec)
		for _, args := range [][]string{
			{"validate", "-f", spec, "--set", "NS=offline"},
			{"plan", "--offline", "-f", spec, "--set", "NS=offline"},
		} {
			out := khook(t, invocation{Args: args})
			want := c.at + `: deployment.apps/`
			if out.Code != 2 || !strings.Contains(out.Stderr, want) || !strings.Contains(out.Stderr, `unknown field "spec.template.spec.containers[0].resourcess"`) {
				t.Errorf("khook %s: exit %d, stderr:\n%s\nwant exit 2 and the unknown field at %s", strings.Join(args, " "), out.Code, out.Stderr, c.at)
			}
		}
	}
}

// An object in a deprecated API version warns offline with the version
// that removes it (under the step in plan --offline, a warning: line in
// validate); --warnings-as-errors makes it a failure, and a --kube-version
// that removed it fails.
func TestOfflineDeprecatedAPIVersionWarns(t *testing.T) {
	spec := testdata("strict", "deprecated.yaml")
	const deprecation = "deprecated.yaml:9:13: volumeattributesclass.storage.k8s.io/gold: storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated and removed in v1.37: use storage.k8s.io/v1"

	out := khook(t, invocation{Args: []string{"validate", "-f", spec}})
	if out.Code != 0 || !strings.Contains(out.Stderr, "warning: ") || !strings.Contains(out.Stderr, deprecation) {
		t.Errorf("validate: exit %d, stderr:\n%s\nwant exit 0 and the warning %q", out.Code, out.Stderr, deprecation)
	}
	out = khook(t, invocation{Args: []string{"plan", "--offline", "-f", spec}})
	// khook's own finding offline (no API server said it): under khook's name.
	if out.Code != 0 || !strings.Contains(out.Stdout, "warning from khook: ") || !strings.Contains(out.Stdout, deprecation) {
		t.Errorf("plan --offline: exit %d, stdout:\n%s\nwant the warning under the step, as khook's", out.Code, out.Stdout)
	}
	out = khook(t, invocation{Args: []string{"plan", "--offline", "--warnings-as-errors", "-f", spec}})
	if out.Code != 1 || !strings.Contains(out.Stdout, "Plan (offline): 1 would fail.") {
		t.Errorf("plan --offline --warnings-as-errors: exit %d, stdout:\n%s\nwant the step planned as fail", out.Code, out.Stdout)
	}
	out = khook(t, invocation{Args: []string{"validate", "--warnings-as-errors", "-f", spec}})
	if out.Code != 2 || !strings.Contains(out.Stderr, deprecation) {
		t.Errorf("validate --warnings-as-errors: exit %d, stderr:\n%s\nwant exit 2", out.Code, out.Stderr)
	}
	out = khook(t, invocation{Args: []string{"validate", "--kube-version", "1.37", "-f", spec}})
	if out.Code != 2 || !strings.Contains(out.Stderr, "VolumeAttributesClass was removed in v1.37: use storage.k8s.io/v1") {
		t.Errorf("validate --kube-version 1.37: exit %d, stderr:\n%s\nwant the removal", out.Code, out.Stderr)
	}
}

// A deprecated API version the cluster still serves (v1 Endpoints) warns
// live, attributed to the step, with the API server's sentence, and
// offline with k8s.io/api's lifecycle data: the same object, both ways.
func TestDeprecatedAPIVersionWarnsLiveAndOffline(t *testing.T) {
	ns := namespace(t)
	spec := testdata("strict", "deprecated-endpoints.yaml")
	offline := khook(t, invocation{Args: []string{"validate", "-f", spec, "--set", "NS=" + ns}})
	const offlineWarning = "deprecated-endpoints.yaml:10:13: endpoints/legacy: v1 Endpoints is deprecated: use discovery.k8s.io/v1 EndpointSlice"
	if offline.Code != 0 || !strings.Contains(offline.Stderr, offlineWarning) {
		t.Errorf("validate: exit %d, stderr:\n%s\nwant the warning %q", offline.Code, offline.Stderr, offlineWarning)
	}
	live := khook(t, invocation{Args: []string{"plan", "--diff", "-f", spec, "--set", "NS=" + ns}})
	attributed := "warning: endpoints/legacy in namespace " + ns + ": v1 Endpoints is deprecated"
	if live.Code != 0 || !strings.Contains(live.Stdout, attributed) {
		t.Errorf("plan --diff: exit %d\nstdout:\n%s\nstderr:\n%s\nwant %q under the step", live.Code, live.Stdout, live.Stderr, attributed)
	}
}
