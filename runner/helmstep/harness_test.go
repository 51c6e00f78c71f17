package helmstep

import (
	"testing"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// The shared test charts from each shared source: install, then a converged
// re-run with no write. withcrd brings a CRD (crds/) and a custom resource,
// which Drift must compare through a freshly discovered kind.
func TestSharedChartsConverge(t *testing.T) {
	f := newFixture(t)
	auth := chartsrc.Auth{Username: "ci", Password: "shared-s3cret"}
	httpRepo := chartsrc.NewHTTPRepo(t, auth, "demo", "withcrd")
	reg := chartsrc.NewOCIRegistry(t, auth)
	ociDemo := reg.Push(t, "demo")
	specAuth := &spec.Auth{Username: auth.Username, Password: auth.Password}

	for _, tc := range []struct {
		name string
		h    spec.Helm
	}{
		{"repo-demo", spec.Helm{Chart: "demo", Repo: httpRepo.URL, Version: chartsrc.Version, Auth: specAuth, Wait: true}},
		{"repo-withcrd", spec.Helm{Chart: "withcrd", Repo: httpRepo.URL, Auth: specAuth}},
		{"oci-demo", spec.Helm{Chart: ociDemo, Version: chartsrc.Version, Auth: specAuth, Wait: true}},
		{"local-demo", spec.Helm{Chart: chartsrc.ChartDir("demo"), Values: map[string]any{"replicaCount": 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := f.step(tc.name, tc.h)
			out := f.run(st, stepTimeout)
			mustContain(t, "detail", out.Detail, "installed release "+tc.name+" revision 1")
			out = f.run(st, stepTimeout)
			if out.Detail != "release "+tc.name+" unchanged at revision 1" || out.Writes != 0 {
				t.Errorf("re-run = %q with %d writes, want unchanged with none", out.Detail, out.Writes)
			}
		})
	}
}

// The engine runs independent helm steps at once through one executor.
func TestParallelSteps(t *testing.T) {
	f := newFixture(t)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
	errs := make(chan error, 3)
	for _, name := range []string{"par-a", "par-b", "par-c"} {
		st := f.step(name, spec.Helm{Chart: "demo", Repo: repo.URL, Values: map[string]any{"replicaCount": 1}})
		go func() { _, err := f.try(st, stepTimeout); errs <- err }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
