package planfile

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// samplePlan is a live plan as runner/plan leaves it, digests made by h.
func samplePlan(h *Hasher) *model.Plan {
	p := &model.Plan{Name: "demo", Server: "https://10.0.0.1:6443", Steps: []model.PlanStep{
		{Name: "config", Type: "apply", Action: model.ActionConfigure, Reason: "drifted", Objects: []model.ObjectPlan{
			{Action: model.ActionConfigure, Kind: "ConfigMap", Namespace: "demo", Name: "settings",
				Desired: h.Object(map[string]any{"data": map[string]any{"a": "1"}}), Live: h.Object(map[string]any{"data": map[string]any{"a": "0"}})},
		}},
		{Name: "release", Type: "helm", Action: model.ActionUpgrade, Release: &model.ReleaseDigest{Revision: 3,
			Chart: h.JSON("chart", "demo-1.0.0"), Values: h.JSON("values", map[string]any{"x": 1})}},
		{Name: "ready", Type: "wait", Action: model.ActionWait, Reason: "not yet"},
		{Name: "prod-only", Type: "helm", Action: model.ActionExcluded, Skip: spec.SkipWhen},
	}, Digests: &model.PlanDigests{Keyed: h.Keyed(), KeyCheck: h.KeyCheck(), Spec: h.Sum("spec", []byte("spec v1")), ClusterUID: "uid-1",
		Inputs: []model.InputDigest{{Name: "ENV", Digest: h.Input("ENV", "prod", false)}, {Name: "TOKEN", Secret: true, Digest: h.Input("TOKEN", "s3cret", true)}}}}
	p.Fingerprint = Fingerprint(p)
	return p
}

func roundTrip(t *testing.T, p *model.Plan) *File {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, New(p, "v1.2.3", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A fingerprint depends on what was planned, not on when, by which khook,
// or on reasons and diffs; a waiting step's wait/no-op is one prediction.
func TestFingerprintIsStable(t *testing.T) {
	h := NewHasher([]byte("k"), nil)
	a, b := samplePlan(h), samplePlan(h)
	b.Steps[0].Reason, b.Steps[0].Diff = "other words", "--- a\n+++ b\n"
	b.Steps[2].Action = model.ActionNoop
	if Fingerprint(a) != Fingerprint(b) {
		t.Errorf("same world, different fingerprints")
	}
	if len(roundTrip(t, a).Changes(b)) != 0 {
		t.Errorf("same world: changes %q", roundTrip(t, a).Changes(b))
	}
	if Fingerprint(&model.Plan{Offline: true}) != "" {
		t.Errorf("an offline plan has a fingerprint")
	}
}

// Each kind of difference changes the fingerprint and is named in a
// sentence that says what was planned and what would happen now.
func TestChangesNameTheDifference(t *testing.T) {
	h := NewHasher([]byte("k"), nil)
	for _, tc := range []struct {
		name   string
		change func(p *model.Plan)
		want   string
	}{
		{"cluster", func(p *model.Plan) { p.Digests.ClusterUID = "uid-2" },
			"the plan was made for cluster https://10.0.0.1:6443 (kube-system UID uid-1); this is https://10.0.0.1:6443 (kube-system UID uid-2)"},
		{"server", func(p *model.Plan) { p.Server = "https://other:6443" }, "this is https://other:6443"},
		{"spec", func(p *model.Plan) { p.Digests.Spec = h.Sum("spec", []byte("spec v2")) }, "the spec changed: its digest was hmac-sha256:"},
		{"input", func(p *model.Plan) { p.Digests.Inputs[0].Digest = h.Input("ENV", "dev", false) }, "input ENV has another value than when planned"},
		{"secret", func(p *model.Plan) { p.Digests.Inputs[1].Digest = h.Input("TOKEN", "other", true) }, "secret input TOKEN has another value"},
		{"action", func(p *model.Plan) { p.Steps[0].Action = model.ActionCreate; p.Steps[0].Reason = "it is gone" },
			"step config: planned configure, now would create (it is gone)"},
		{"live", func(p *model.Plan) {
			p.Steps[0].Objects[0].Live = h.Object(map[string]any{"data": map[string]any{"a": "edited"}})
		},
			"step config: planned configure ConfigMap demo/settings against live digest hmac-sha256:"},
		{"gone", func(p *model.Plan) {
			p.Steps[0].Objects[0].Action, p.Steps[0].Objects[0].Live = model.ActionCreate, ""
		}, "now would create it (absent)"},
		{"desired", func(p *model.Plan) { p.Steps[0].Objects[0].Desired = h.Object(map[string]any{"b": 1}) },
			"step config: planned configure ConfigMap demo/settings as desired digest"},
		{"revision", func(p *model.Plan) { p.Steps[1].Release.Revision = 4 }, "step release: planned against release revision 3, now it is at revision 4"},
		{"chart", func(p *model.Plan) { p.Steps[1].Release.Chart = h.JSON("chart", "demo-1.0.1") }, "step release: the chart apply would install changed"},
		{"excluded", func(p *model.Plan) { p.Steps[3].Action, p.Steps[3].Skip = model.ActionInstall, "" }, "step prod-only: planned excluded, now would install"},
		{"new step", func(p *model.Plan) {
			p.Steps = append(p.Steps, model.PlanStep{Name: "extra", Action: model.ActionRun})
		}, "step extra: not in the plan, now would run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviewed := roundTrip(t, samplePlan(h))
			now := samplePlan(h)
			tc.change(now)
			if Fingerprint(now) == reviewed.Plan.Fingerprint {
				t.Errorf("the fingerprint did not change")
			}
			got := strings.Join(reviewed.Changes(now), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("changes:\n%s\nwant a sentence with %q", got, tc.want)
			}
		})
	}
}

// Another key is named as such, not as a changed world.
func TestChangesNameAnotherKey(t *testing.T) {
	reviewed := roundTrip(t, samplePlan(NewHasher([]byte("k1"), nil)))
	for key, want := range map[string]string{"k2": "KHOOK_PLAN_KEY differs from the key the plan was made with", "": "the plan was made with the plan key (KHOOK_PLAN_KEY) and this run does not have it"} {
		got := reviewed.Changes(samplePlan(NewHasher([]byte(key), nil)))
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("key %q: %q, want %q", key, got, want)
		}
	}
}

// Read refuses what it cannot vouch for, each with a sentence saying what
// to do.
func TestReadRefuses(t *testing.T) {
	var good bytes.Buffer
	if err := Write(&good, New(samplePlan(NewHasher(nil, nil)), "v1", time.Unix(0, 0))); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(good.String(), `"revision": 3`, `"revision": 2`, 1)
	for name, tc := range map[string]struct{ data, want string }{
		"newer":      {`{"format":"khook.io/plan/v2","plan":{}}`, `has format "khook.io/plan/v2"; this khook reads only "khook.io/plan/v1": use the khook version that wrote it`},
		"no format":  {`{"plan":{}}`, "has no format field: it is not a khook plan file"},
		"truncated":  {good.String()[:good.Len()/2], "is not valid JSON"},
		"edited":     {edited, "does not match its fingerprint"},
		"offline":    {`{"format":"khook.io/plan/v1","plan":{"offline":true}}`, "holds an offline plan"},
		"wrong type": {`{"format":"khook.io/plan/v1","plan":{"steps":"x"}}`, "does not match format khook.io/plan/v1"},
	} {
		_, err := Read(strings.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// Unkeyed digests never depend on a secret: the secret input has none, and
// data holding a secret digests as data holding the mask would.
func TestUnkeyedDigestsLeaveSecretsOut(t *testing.T) {
	r := redact.New()
	r.Add("hunter2")
	r.Add("a.*[b]$\nsecond line")
	h := NewHasher(nil, r)
	if h.Input("TOKEN", "hunter2", true) != "" {
		t.Errorf("an unkeyed secret input got a digest")
	}
	if h.Sum("spec", []byte("pw: hunter2")) != h.Sum("spec", []byte("pw: a.*[b]$\nsecond line")) {
		t.Errorf("an unkeyed digest depends on a secret value")
	}
	if k := NewHasher([]byte("k"), r); k.Sum("spec", []byte("pw: hunter2")) == k.Sum("spec", []byte("pw: hunter3")) {
		t.Errorf("a keyed digest does not see the secret")
	}
}

// A corrupted or truncated plan file gets an error, never a panic, and
// whatever Read accepts writes back to an equal file.
func FuzzReadPlanFile(f *testing.F) {
	var good bytes.Buffer
	_ = Write(&good, New(samplePlan(NewHasher([]byte("k"), nil)), "v1", time.Unix(0, 0)))
	f.Add(good.Bytes())
	f.Add([]byte(`{"format":"khook.io/plan/v1"}`))
	f.Add([]byte(`{"format":"khook.io/plan/v1","plan":{"digests":{},"fingerprint":"00"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := Read(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		var out bytes.Buffer
		if err := Write(&out, pf); err != nil {
			t.Fatalf("Read accepted a file Write refuses: %v", err)
		}
		if _, err := Read(&out); err != nil {
			t.Fatalf("a written file does not read back: %v", err)
		}
	})
}
