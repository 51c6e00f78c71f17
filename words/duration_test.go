package words

import (
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2 * time.Minute: "2m", 90 * time.Minute: "1h30m", time.Hour: "1h", 1500 * time.Millisecond: "1.5s", 3 * time.Second: "3s",
		2*time.Minute + 5*time.Second: "2m5s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
