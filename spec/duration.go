package spec

import (
	"encoding/json"
	"time"
)

// Duration is a time.Duration written as a Go duration string ("5m", "30s").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string, the way specs write it.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
