package spec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const fleetSchemaFile = "../docs/schema/v1/fleet.json"

func TestLoadFleet(t *testing.T) {
	f, err := LoadFleet("testdata/fleet/fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata.Name != "platform" || len(f.Clusters) != 3 || f.Rollout.MaxFailures != 1 {
		t.Fatalf("fleet = %+v", f)
	}
	st, err := f.Cluster("staging")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"testdata/fleet/khook.yaml", "testdata/fleet/clusters/staging.yaml"}
	if got := f.SpecFiles(st); !reflect.DeepEqual(got, want) {
		t.Errorf("SpecFiles = %v, want %v", got, want)
	}
	// The fleet's policy files, then the cluster's own.
	eu, err := f.Cluster("prod-eu")
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range map[*FleetCluster][]string{
		st: {"testdata/fleet/policies/common.yaml"},
		eu: {"testdata/fleet/policies/common.yaml", "testdata/fleet/policies/prod.yaml"},
	} {
		if got := f.PolicyPaths(c); !reflect.DeepEqual(got, want) {
			t.Errorf("PolicyPaths(%s) = %v, want %v", c.Name, got, want)
		}
	}
	if got := st.Set(); !reflect.DeepEqual(got, []string{"REGION=eu-west-1"}) {
		t.Errorf("Set = %v", got)
	}
	if _, err := f.Cluster("prod-ue"); err == nil || !bytes.Contains([]byte(err.Error()), []byte(`did you mean`)) {
		t.Errorf("Cluster(prod-ue) = %v, want a did-you-mean", err)
	}
	sel, err := ParseSelector("env=prod,region!=us")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Select(0, sel); len(got) != 1 || got[0].Name != "prod-eu" {
		t.Errorf("Select(env=prod,region!=us) = %v", got)
	}
	if got := f.Select(2, Selector{}); len(got) != 2 {
		t.Errorf("Select(wave 2) = %d clusters, want 2", len(got))
	}
	if got := f.Waves(); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("Waves = %v", got)
	}
	if _, err := ParseSelector("env"); err == nil {
		t.Error("ParseSelector(env) accepted a term without =")
	}
}

// Every problem of an invalid fleet file at once, each at file:line:col
// (go test ./spec -run TestLoadFleetInvalid -update rewrites the golden).
func TestLoadFleetInvalid(t *testing.T) {
	_, err := LoadFleet("testdata/fleet/invalid.yaml")
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("err = %v, want Problems", err)
	}
	got := []byte(probs.Error() + "\n")
	golden := "testdata/fleet/invalid.golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", got, want)
	}
}

// TestFleetSchemaUpToDate fails when docs/schema/v1/fleet.json drifts from
// FleetSchema() (-update rewrites it); the schema accepts the example fleet
// and rejects the invalid one.
func TestFleetSchemaUpToDate(t *testing.T) {
	got := FleetSchema()
	if *update {
		if err := os.WriteFile(fleetSchemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fleetSchemaFile)
	if err != nil || !bytes.Equal(want, got) {
		t.Fatalf("%s is out of date (%v): run go test ./spec -run TestFleetSchemaUpToDate -update", fleetSchemaFile, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(FleetSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(FleetSchemaID)
	if err != nil {
		t.Fatalf("fleet schema does not compile: %v", err)
	}
	for file, valid := range map[string]bool{"fleet.yaml": true, "invalid.yaml": false} {
		text, err := os.ReadFile(filepath.Join("testdata", "fleet", file))
		if err != nil {
			t.Fatal(err)
		}
		err = sch.Validate(yamlToJSON(t, text))
		if (err == nil) != valid {
			t.Errorf("%s: schema validation = %v, want valid=%v", file, err, valid)
		}
	}
}

// TestFleetLegPutsTheRunsOwnLast: a leg's var files, sets and policy files
// are the fleet's and the cluster's, then the run's own (a later one
// wins); its spec files are the fleet's and the cluster's alone.
func TestFleetLegPutsTheRunsOwnLast(t *testing.T) {
	f := &Fleet{Path: "/repo/fleet.yaml", Files: []string{"khook.yaml"}, Policies: []string{"policy/all.yaml"}}
	c := &FleetCluster{Name: "eu", Files: []string{"eu.yaml"}, VarFiles: []string{"eu.vars"}, Vars: map[string]string{"B": "2", "A": "1"}, Policies: []string{"policy/eu.yaml"}}
	got := f.Leg(c, LegInputs{Files: []string{"ignored.yaml"}, VarFiles: []string{"run.vars"}, Set: []string{"A=9"}, Policies: []string{"run.policy"}})
	want := LegInputs{
		Files:    []string{f.Resolve("khook.yaml"), f.Resolve("eu.yaml")},
		VarFiles: []string{f.Resolve("eu.vars"), "run.vars"},
		Set:      []string{"A=1", "B=2", "A=9"},
		Policies: []string{f.Resolve("policy/all.yaml"), f.Resolve("policy/eu.yaml"), "run.policy"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Leg = %+v\nwant %+v", got, want)
	}
}
