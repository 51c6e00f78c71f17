package spec

import (
	"bytes"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/khook/khook/redact"
)

// bigSpec generates an n-step spec: chains of needs (each step needs the
// previous two), every step type, variables with defaults and pipelines,
// when: conditions and helm values.
func bigSpec(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${NAME:-big}\ndefaults:\n  timeout: 10m\n  retries: 1\nstate: {}\nsteps:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: step-%d\n", i)
		if i > 1 {
			fmt.Fprintf(&b, "    needs: [step-%d, step-%d]\n", i-1, i-2)
		}
		if i%10 == 0 {
			b.WriteString("    when: vars.get(\"ENV\", \"dev\") == \"prod\"\n")
		}
		switch i % 7 {
		case 0:
			fmt.Fprintf(&b, "    helm:\n      chart: app-%d:${VERSION:-1.2.3}\n      repo: https://charts.example.com\n      namespace: ${NS:-apps}\n      values:\n        replicas: 2\n        image: {repository: example/app, tag: \"${TAG:-v1}\"}\n        labels: {team: ${TEAM:-platform|lower}}\n", i)
		case 1:
			b.WriteString("    apply:\n      namespace: apps\n      waitFor: condition=Available\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm}\n            data: {a: \"${ENV:-dev|upper}\"}\n        - file: ./manifests/app.yaml\n")
		case 2:
			b.WriteString("    delete:\n      resource: daemonset/aws-node\n      namespace: kube-system\n")
		case 3:
			b.WriteString("    patch:\n      target: deployment/app\n      namespace: apps\n      patch: {spec: {replicas: 3}}\n")
		case 4:
			b.WriteString("    wait:\n      for: jsonpath={.status.readyReplicas}=2\n      on: deployment/app\n      namespace: apps\n")
		case 5:
			b.WriteString("    rollout:\n      status: deployment/app\n      namespace: apps\n")
		case 6:
			b.WriteString("    job:\n      image: busybox:1.37\n      command: [sh, -c]\n      args: [\"echo ${ENV:-dev}\"]\n      env: {A: \"1\"}\n")
		}
	}
	return b.Bytes()
}

// BenchmarkLoad1000Steps measures load + validate of a 1,000-step spec.
// Besides ns/op and B/op it reports the peak heap in use (peak-heap-MiB),
// sampled after each load while the spec is still live, and the process
// CPU time per load (cpu-ms/op), steadier than wall time on a busy machine.
func BenchmarkLoad1000Steps(b *testing.B) {
	src := bigSpec(1000)
	env := []string{"KHOOK_VAR_ENV=prod", "KHOOK_SECRET_TAG=v2"}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var peak uint64
	var ms runtime.MemStats
	cpu0 := cpuTime()
	for b.Loop() {
		s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(src), Environ: env, Redactor: redact.New()})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestBigSpecLoads(t *testing.T) {
	s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(bigSpec(100)), Environ: []string{"KHOOK_VAR_ENV=prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 100 || len(s.Order()) != 99 || s.Steps[10].Excluded() {
		t.Errorf("unexpected shape: %d steps, %d levels, step 10 excluded=%v", len(s.Steps), len(s.Order()), s.Steps[10].Excluded())
	}
}
