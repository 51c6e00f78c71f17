package model

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
	// Archive is the chart's bytes as fetched: an OCI chart's manifest
	// digest, a repository's or local .tgz's sha256 (never keyed: it is
	// the registry's own public digest). apply --plan refuses another.
	Archive string `json:"archive,omitempty"`
}
