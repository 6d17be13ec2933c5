// Command usage_aux_counter_hotspot_baseline hammers the auxiliary hot rows (proxy node,
// management token, api key last-used) in every write mode and verifies them; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/auxcounter"
)

func main() { cli.Main(auxcounter.New()) }
