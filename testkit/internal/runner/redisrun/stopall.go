package redisrun

import "github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"

// StopAll stops every redis-server and Redis Cluster this process started for its runs' queues
// and has not stopped (a panic's way out).
func StopAll() error { return redisserver.StopAll() }
