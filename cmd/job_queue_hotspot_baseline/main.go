// Command job_queue_hotspot_baseline runs a job queue on a PostgreSQL table — jobs inserted,
// claimed under a lease with FOR UPDATE SKIP LOCKED, run and completed — completing each job
// inline, through the async queue with and without compaction, and through River's own client,
// and verifies every job was completed exactly once; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/jobqueue"
)

func main() { cli.Main(jobqueue.New()) }
