// Command usage_aux_counter_hotspot_baseline hammers the auxiliary hot rows (proxy node,
// management token, api key last-used) in every write mode and verifies them; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suites/auxcounter"
)

func main() { testkit.Main(auxcounter.New()) }
