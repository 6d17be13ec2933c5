package redisrun

import (
	"slices"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for _, c := range []struct {
		url   string
		addrs []string
		pw    string
		bad   bool
	}{
		{url: "redis://:pw@10.0.0.5:6379/0", addrs: []string{"10.0.0.5:6379"}, pw: "pw"},
		{url: "redis://:pw@h1:7000,h2:7001,h3:7002", addrs: []string{"h1:7000", "h2:7001", "h3:7002"}, pw: "pw"},
		{url: "redis://:pw@h1:7000,h2:7001/0", addrs: []string{"h1:7000", "h2:7001"}, pw: "pw"},
		{url: "redis://:pw@h1:7000,redis://:pw@h2:7001", addrs: []string{"h1:7000", "h2:7001"}, pw: "pw"},
		{url: "redis://h1:7000, redis://h2:7001", addrs: []string{"h1:7000", "h2:7001"}},
		{url: "redis://:a@h1:7000,redis://:b@h2:7001", bad: true},
		{url: "redis://h1:7000,h2:7001/3", bad: true},
		{url: "h1:7000,h2:7001", bad: true},
		{url: "", bad: true},
	} {
		s, err := ParseSeeds(c.url)
		if c.bad {
			if err == nil {
				t.Errorf("%q: no error", c.url)
			}
			continue
		}
		if err != nil || !slices.Equal(s.Addrs, c.addrs) || s.Options.Password != c.pw {
			t.Errorf("%q: %v %v, %v; want %v %q", c.url, s.Addrs, s.Options, err, c.addrs, c.pw)
		}
	}
}
