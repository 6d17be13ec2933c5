// Command usage_counter_hotspot_baseline hammers the usage-counter hot rows in every write
// mode and verifies the totals; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

func main() { cli.Main(usagecounter.New()) }
