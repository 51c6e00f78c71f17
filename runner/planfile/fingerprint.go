package planfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Fingerprint is the hex SHA-256 of a canonical encoding of what a live plan
// was decided from and decided: the spec and input digests, the cluster
// (server and kube-system UID), and per step its action, its objects with
// their desired and live digests, and a helm step's release digests. No
// timestamp, version, reason or diff text goes in, so two plans of an
// unchanged world share it. "" for an offline plan.
func Fingerprint(p *model.Plan) string {
	if p == nil || p.Offline || p.Digests == nil {
		return ""
	}
	type object struct {
		Action, Kind, Namespace, Name, Desired, Live string
	}
	type step struct {
		Name, Action string
		Objects      []object
		Release      *model.ReleaseDigest
	}
	doc := struct {
		V               int
		Keyed           bool
		KeyCheck        string
		Spec            string
		Inputs          []model.InputDigest
		Server, Cluster string
		Steps           []step
	}{V: 1, Keyed: p.Digests.Keyed, KeyCheck: p.Digests.KeyCheck, Spec: p.Digests.Spec, Inputs: p.Digests.Inputs,
		Server: p.Server, Cluster: p.Digests.ClusterUID}
	for _, s := range p.Steps {
		st := step{Name: s.Name, Action: comparedAction(s), Release: s.Release}
		for _, o := range s.Objects {
			st.Objects = append(st.Objects, object{string(o.Action), o.Kind, o.Namespace, o.Name, o.Desired, o.Live})
		}
		doc.Steps = append(doc.Steps, st)
	}
	data, _ := json.Marshal(doc) // strings, ints and bools only: cannot fail
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// comparedAction is the action the fingerprint and the comparison hold a
// step to. Waiting steps (wait, rollout status) write nothing: whether their
// condition already holds is a matter of time, not a change, so "wait" and
// "no-op" are one prediction for them.
func comparedAction(s model.PlanStep) string {
	if (s.Type == spec.TypeWait || s.Type == spec.TypeRollout) && (s.Action == model.ActionWait || s.Action == model.ActionNoop) {
		return "read-only"
	}
	return string(s.Action)
}
