package redisrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Seeds is a parsed --redis-url: one server, or the seed nodes of a Redis Cluster.
type Seeds struct {
	// Options are the first seed's (password, database, TLS, timeouts).
	Options *redis.Options
	// Addrs are every seed's host:port, the first one's first.
	Addrs []string
}

// Several reports whether more than one seed was given: a cluster, which every seed must be
// a node of.
func (s Seeds) Several() bool { return len(s.Addrs) > 1 }

// ParseSeeds reads --redis-url: redis://[:password@]host:port[/db], the seeds of a cluster
// as hosts separated by commas (redis://:password@host1:port1,host2:port2), or several such
// URLs separated by commas (every one with the same password and database).
func ParseSeeds(raw string) (Seeds, error) {
	var parts []string
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return Seeds{}, errors.New("empty")
	}
	scheme, rest, ok := strings.Cut(parts[0], "://")
	if !ok {
		return Seeds{}, fmt.Errorf("%q is not a redis:// URL", parts[0])
	}
	if len(parts) > 1 && !strings.Contains(parts[1], "://") {
		// Hosts separated by commas inside one URL: put each in the URL's place in turn.
		auth, hostAndPath := "", rest
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			auth, hostAndPath = rest[:i+1], rest[i+1:]
		}
		_, path, _ := strings.Cut(parts[len(parts)-1], "/")
		hosts := append([]string{strings.SplitN(hostAndPath, "/", 2)[0]}, parts[1:]...)
		hosts[len(hosts)-1], _, _ = strings.Cut(hosts[len(hosts)-1], "/")
		parts = parts[:0]
		for _, h := range hosts {
			u := scheme + "://" + auth + h
			if path != "" {
				u += "/" + path
			}
			parts = append(parts, u)
		}
	}
	var s Seeds
	for i, p := range parts {
		o, err := redis.ParseURL(p)
		if err != nil {
			return Seeds{}, err
		}
		if i == 0 {
			s.Options = o
		} else if o.Password != s.Options.Password || o.DB != s.Options.DB {
			return Seeds{}, errors.New("every seed must have the same password and database")
		}
		s.Addrs = append(s.Addrs, o.Addr)
	}
	if s.Several() && s.Options.DB != 0 {
		return Seeds{}, fmt.Errorf("a Redis Cluster has database 0 only, not %d", s.Options.DB)
	}
	return s, nil
}
