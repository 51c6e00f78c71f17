package plan

import (
	"context"
	"testing"

	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/bench"
)

// BenchmarkValidatePlatform is `khook validate` of the platform workload
// (test/bench: 200 steps, 1,985 objects, 30 local charts rendered)
// offline: loading the spec, then every manifest and rendered chart against
// the schemas and API versions of the default Kubernetes version.
//
//	go test ./runner/plan -run '^$' -bench ValidatePlatform -benchmem
func BenchmarkValidatePlatform(b *testing.B) {
	p, err := bench.GeneratePlatform(b.TempDir(), "pk")
	if err != nil {
		b.Fatal(err)
	}
	v, _ := apischema.ParseKubeVersion(apischema.DefaultKubeVersion)
	b.ReportAllocs()
	for b.Loop() {
		s, err := spec.Load(spec.LoadOptions{Files: []string{p.Spec()}})
		if err != nil {
			b.Fatal(err)
		}
		if problems, warnings := CheckAPIs(context.Background(), s, v); len(problems)+len(warnings) > 0 {
			b.Fatalf("the platform workload is not valid offline:\n%v\n%v", problems, warnings)
		}
	}
}
