// Command request_candidate_persistence_baseline writes request-candidate lifecycle records
// in every write mode (inline, async queue, async queue with slot compaction) and verifies
// every slot's final row; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
)

func main() { cli.Main(candidates.New()) }
