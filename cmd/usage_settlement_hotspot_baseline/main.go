// Command usage_settlement_hotspot_baseline settles pending usages onto hot wallet, api key
// quota and provider monthly rows in every write mode and verifies the balances; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/settlement"
)

func main() { cli.Main(settlement.New()) }
