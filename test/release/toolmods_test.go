package release

import "testing"

// toolModules are the tool modules make test builds from source beside
// khook: the test control plane and GoReleaser.
var toolModules = []string{"test/tools/controlplane", "tools/goreleaser"}

// apart are the modules a tool module may not share, each with why.
var apart = map[string]string{
	// GoReleaser v2.17 needs rc.6, whose errors actionlint v1.7.12 (the
	// workflow checks of khook's tests) does not build against.
	"tools/goreleaser go.yaml.in/yaml/v4": "v4.0.0-rc.6",
}

// Each tool module selects khook's version of every module it shares with
// khook. With the same versions, toolchain and flags (make test's
// CGO_ENABLED=0 -trimpath), the packages both need (k8s.io/api, client-go,
// apiserver, grpc, otel, the cloud SDKs) have the same build-cache entries
// and compile once in a run from nothing instead of once per graph (#50).
func TestToolModulesShareKhookVersions(t *testing.T) {
	khook := goModRequires(t, "")
	for _, dir := range toolModules {
		for path, v := range goModRequires(t, dir) {
			if kv, ok := khook[path]; ok && kv != v && apart[dir+" "+path] != v {
				t.Errorf("%s/go.mod selects %s %s, khook's go.mod %s: run `cd %s && go get %s@%s && go mod tidy` (or raise khook's)", dir, path, v, kv, dir, path, kv)
			}
		}
	}
}
