package cluster

import "testing"

func TestRefuseReason(t *testing.T) {
	for dest, allowed := range map[string]bool{
		"127.0.0.1:10250":  true,
		"127.5.6.7:1":      true,
		"[::1]:443":        true,
		"localhost:8443":   true,
		"10.96.0.12:443":   false,
		"10.0.0.5:8443":    false,
		"172.16.1.1:443":   false,
		"192.168.1.1:443":  false,
		"8.8.8.8:53":       false,
		"example.com:443":  false,
		"kubernetes:443":   false,
		"no-port":          false,
		"[::ffff:a00:1]:1": false,
	} {
		if got := refuseReason(dest) == ""; got != allowed {
			t.Errorf("refuseReason(%q) allows = %v, want %v (%q)", dest, got, allowed, refuseReason(dest))
		}
	}
}
