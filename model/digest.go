package model

import "strings"

// PlanDigests identify what a live plan was decided from. Every digest is
// "sha256:<hex>" or, when the plan key was set, "hmac-sha256:<hex>" keyed
// with it (runner/planfile says why and how).
type PlanDigests struct {
	// Keyed is whether the digests are HMACs with the plan key.
	Keyed bool `json:"keyed"`
	// KeyCheck is a keyed digest of a constant: it tells a plan made with
	// another key from one made against another world ("" unkeyed).
	KeyCheck string `json:"keyCheck,omitempty"`
	// Spec is the digest of the merged, substituted spec.
	Spec string `json:"spec"`
	// Inputs are the declared inputs' digests, in declaration order.
	Inputs []InputDigest `json:"inputs,omitempty"`
	// ClusterUID is the kube-system namespace's UID: with Plan.Server it
	// names the cluster ("" when it could not be read).
	ClusterUID string `json:"clusterUID"`
}

// InputDigest is one input's digest, never its value. A secret input has
// one only when the plan is keyed.
type InputDigest struct {
	Name   string `json:"name"`
	Secret bool   `json:"secret,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// ReleaseDigest is what a helm step was predicted against: the release's
// last revision (0: none) and the digests of the chart and values apply
// would install.
type ReleaseDigest struct {
	Revision int    `json:"revision"`
	Chart    string `json:"chart,omitempty"`
	Values   string `json:"values,omitempty"`
	// Version is the chart's name@version ("" when no chart was loaded).
	Version string `json:"version,omitempty"`
	// Archive is the chart's bytes as fetched: an OCI chart's manifest
	// digest, a repository's or local .tgz's sha256 (never keyed: it is
	// the registry's own public digest). apply --plan refuses another.
	Archive string `json:"archive,omitempty"`
}

// ChartFetched is the chart a helm step installed, upgraded to or found
// installed: name@version, the digest of its bytes (as ReleaseDigest.Archive)
// and who signed it when its verify: held. The state record keeps the
// digest, so a later drift run sees the same version re-published.
type ChartFetched struct {
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
	Signer  string `json:"signer,omitempty"`
}

// GitDigestPrefix starts the digest of a chart read from git: the commit
// it was read at ("git:<hash>"), which names its bytes.
const GitDigestPrefix = "git:"

// ChartMoved is a drift finding of a helm step: the repository serves other
// bytes for the chart version the state record says the step last applied.
type ChartMoved struct {
	Version string `json:"version"`
	// Applied is the digest the state record keeps; Served the one the
	// plan fetched now.
	Applied string `json:"applied"`
	Served  string `json:"served"`
}

// String is the finding as one clause.
func (m ChartMoved) String() string {
	if strings.HasPrefix(m.Applied, GitDigestPrefix) {
		return "the git ref now names another commit for chart " + m.Version + " than the step last applied (" +
			m.Applied + " in the state record, " + m.Served + " now): the branch or tag moved"
	}
	return "the repository now serves other bytes for chart " + m.Version + " than the step last applied (" +
		m.Applied + " in the state record, " + m.Served + " now): the version was re-published"
}
