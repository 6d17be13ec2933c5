// Command script_hotspot_baseline runs your own hot write path, written as a pgbench script,
// in every write mode and verifies what it wrote; see --help.
package main

import (
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script"
)

func main() { cli.Main(script.New()) }
