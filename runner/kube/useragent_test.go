package kube

import (
	"runtime"
	"testing"

	"k8s.io/client-go/rest"
)

// khook's requests name khook, whatever the binary is called: audit logs
// and API server metrics tell them apart by it.
func TestClientsSayTheyAreKhook(t *testing.T) {
	c, err := NewClientsForConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Config.UserAgent != UserAgent {
		t.Errorf("User-Agent %q, want %q", c.Config.UserAgent, UserAgent)
	}
	c, err = NewClientsForConfig(&rest.Config{Host: "https://127.0.0.1:1", UserAgent: "probe/1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Config.UserAgent != "probe/1" {
		t.Errorf("a config's own User-Agent became %q", c.Config.UserAgent)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if got, want := UserAgentFor("v1.2.3"), "khook/v1.2.3 ("+platform+")"; got != want {
		t.Errorf("UserAgentFor = %q, want %q", got, want)
	}
	if got := UserAgentFor(""); got != "khook ("+platform+")" {
		t.Errorf("UserAgentFor without a version = %q", got)
	}
}
