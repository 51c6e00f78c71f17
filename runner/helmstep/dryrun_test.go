package helmstep

import (
	"context"
	"testing"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// DryRun is the install or upgrade apply runs: its release (revision,
// manifest rendered with the cluster's capabilities and the upgrade's
// .Release) is the one Execute then stores, and it writes nothing.
func TestDryRunIsWhatApplyStores(t *testing.T) {
	f := newFixture(t)
	st := f.step("caps", spec.Helm{Chart: chartsrc.ChartDir("caps"), Values: map[string]any{"message": "one"}})
	for _, msg := range []string{"one", "two", "three"} {
		st.Helm.Values["message"] = msg
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		r, err := f.exec.Open(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.exec.Load(ctx, r); err != nil {
			t.Fatal(err)
		}
		before := f.revisions("caps")
		planned, err := f.exec.DryRun(ctx, r, installOrUpgrade(r), DryRunOptions{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if n := f.revisions("caps"); n != before {
			t.Fatalf("the dry run stored a revision: %d, then %d", before, n)
		}
		f.run(st, stepTimeout)
		r, err = f.exec.Open(st)
		if err != nil {
			t.Fatal(err)
		}
		if planned.Version != r.Last.Version || planned.Manifest != r.Last.Manifest {
			t.Errorf("message %s: dry run revision %d\n%s\napply stored revision %d\n%s", msg, planned.Version, planned.Manifest, r.Last.Version, r.Last.Manifest)
		}
	}

	// The API versions a plan knows earlier steps register are capabilities.
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	r, err := f.exec.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.exec.Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	planned, err := f.exec.DryRun(ctx, r, installOrUpgrade(r), DryRunOptions{APIVersions: []string{"verdict.khook.test/v1", "verdict.khook.test/v1/Gadget"}})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "manifest", planned.Manifest, `gadgets: "true"`, `rev: "4"`, `upgrade: "true"`)
}

// A release whose object another release owns fails the dry run with the
// sentence apply fails with.
func TestDryRunFailsAsApplyFails(t *testing.T) {
	f := newFixture(t)
	f.run(f.step("owner", spec.Helm{Chart: chartsrc.ChartDir("caps")}), stepTimeout)
	st := f.step("intruder", spec.Helm{Chart: chartsrc.ChartDir("caps"), Values: map[string]any{"name": "owner-caps"}})
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	r, err := f.exec.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.exec.Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, planned := f.exec.DryRun(ctx, r, installOrUpgrade(r), DryRunOptions{})
	_, applied := f.try(st, stepTimeout)
	if planned == nil || applied == nil || planned.Error() != applied.Error() {
		t.Fatalf("dry run: %v\napply:   %v\nwant the same failure", planned, applied)
	}
	mustContain(t, "error", planned.Error(), "release intruder", "install failed", "invalid ownership metadata")
}
