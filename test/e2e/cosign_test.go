package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
)

const (
	cosignIssuer   = "https://token.actions.githubusercontent.com"
	cosignWorkflow = "https://github.com/org/charts/.github/workflows/release.yaml@refs/heads/main"
	cosignIntruder = "https://github.com/evil/charts/.github/workflows/release.yaml@refs/heads/main"
)

// cosignKeyless is verify.cosign for the workflow identity with the
// offline Sigstore's trusted_root.json.
const cosignKeyless = "        identity: {issuer: " + cosignIssuer + ", subject: " + cosignWorkflow + "}\n        trustedRoot: ./trusted_root.json\n"

// cosignStep pushes the demo chart to a registry of its own, signs it with
// sign, and writes a spec whose helm step installs it into a new namespace
// with verify.cosign as given (YAML at the cosign: key's indentation + 2),
// key's PEM and store's root beside the spec as cosign.pub and
// trusted_root.json.
func cosignStep(t *testing.T, sign func(*testing.T, chartsrc.CosignChart), verify string, key chartsrc.CosignKey, store chartsrc.Sigstore) (ch chartsrc.CosignChart, ns, file string) {
	t.Helper()
	ch = chartsrc.PushCosign(t, chartsrc.Auth{})
	sign(t, ch)
	ns = namespace(t)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "cosign.pub"), key.PEM, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "trusted_root.json"), store.Root, 0o644))
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: cosign}\nsteps:\n- name: app\n  helm:\n    namespace: %s\n    chart: %s:%s\n    verify:\n      cosign:\n%s",
		ns, ch.Ref(), chartsrc.Version, verify)
	file = filepath.Join(dir, "khook.yaml")
	must(t, os.WriteFile(file, []byte(text), 0o644))
	return ch, ns, file
}

// A chart signed with cosign, key-based in both formats and keyless through
// the offline Sigstore (its trusted_root.json as trustedRoot:): the plan
// names the signer and the manifest digest, apply installs and its line
// names the signer too.
func TestCosignVerified(t *testing.T) {
	key := chartsrc.NewCosignKey(t)
	store := chartsrc.NewSigstore(t)
	keyed := "        key: ./cosign.pub\n"
	for _, c := range []struct {
		name, verify, signer string
		sign                 func(t *testing.T, c chartsrc.CosignChart)
	}{
		{"key bundle", keyed, "key " + key.Fingerprint(), func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, key, c.Digest()))
		}},
		{"key tag", keyed, "key " + key.Fingerprint(), func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.SignTagged(t, c, key, c.Digest())
		}},
		{"keyless bundle", cosignKeyless, cosignWorkflow + " issued by " + cosignIssuer, func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, cosignWorkflow, cosignIssuer, c.Digest()))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, ns, file := cosignStep(t, c.sign, c.verify, key, store)
			st := planJSON(t, nil, file).Steps[0]
			if st.Action != model.ActionInstall || !strings.Contains(st.Reason, "; chart "+ch.Digest()+"; verified: signed by "+c.signer) ||
				st.Release == nil || st.Release.Archive != ch.Digest() {
				t.Errorf("plan: %s %q release %+v; want install signed by %s", st.Action, st.Reason, st.Release, c.signer)
			}
			out := khook(t, invocation{Args: []string{"apply", "-f", file}})
			if out.Code != 0 || !strings.Contains(out.Stdout, "verified: signed by "+c.signer) {
				t.Errorf("apply: exit %d; want its line to name the signer %s\n%s%s", out.Code, c.signer, out.Stdout, out.Stderr)
			}
			if n := releasesIn(t, ns); n != 1 {
				t.Errorf("%d release records after apply, want 1", n)
			}
		})
	}
}

// The wrong key, no signature, another identity: the step plans fail (exit
// 1) with one sentence naming the chart, what was required and what was
// found, and apply installs nothing.
func TestCosignRefused(t *testing.T) {
	key, other := chartsrc.NewCosignKey(t), chartsrc.NewCosignKey(t)
	store := chartsrc.NewSigstore(t)
	keyed := "        key: ./cosign.pub\n"
	for _, c := range []struct {
		name, verify, found string
		sign                func(t *testing.T, c chartsrc.CosignChart)
	}{
		{"wrong key", keyed, "none of the required keys verifies", func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, other, c.Digest()))
		}},
		{"wrong key, tag", keyed, "none of the required keys verifies", func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.SignTagged(t, c, other, c.Digest())
		}},
		{"missing signature", keyed, "found no cosign signature", func(*testing.T, chartsrc.CosignChart) {}},
		{"wrong identity", cosignKeyless, "a keyless signature by " + cosignIntruder + " issued by " + cosignIssuer, func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, cosignIntruder, cosignIssuer, c.Digest()))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, ns, file := cosignStep(t, c.sign, c.verify, key, store)
			out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
			var p model.Plan
			must(t, json.Unmarshal([]byte(out.Stdout), &p))
			sentence := "chart demo 0.1.0 from " + ch.Ref() + ":" + chartsrc.Version + ": verify.cosign: " + ch.Ref() + "@" + ch.Digest() + " is not verified: required a signature by "
			r := p.Steps[0].Reason
			if out.Code != 1 || p.Steps[0].Action != model.ActionFail || !strings.Contains(r, sentence) || !strings.Contains(r, c.found) || strings.Count(r, "\n") > 0 {
				t.Errorf("plan: exit %d, %s %q\nwant one line with %q ... %q", out.Code, p.Steps[0].Action, r, sentence, c.found)
			}
			ap := applySpec(t, file)
			expectSteps(t, ap, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: c.found}})
			if ap.Code != 1 {
				t.Errorf("apply exit %d, want 1", ap.Code)
			}
			if n := releasesIn(t, ns); n != 0 {
				t.Errorf("apply installed %d release records of a refused chart", n)
			}
		})
	}
}
